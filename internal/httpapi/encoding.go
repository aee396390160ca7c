package httpapi

import (
	"net/http"
	"strings"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// responseCoding is the content coding an answer is sent in, chosen by
// negotiateEncoding.
type responseCoding int

const (
	codingIdentity responseCoding = iota // as it is
	codingGzip
	// codingNone: the client refuses every coding the answer can be sent
	// in, identity included.
	codingNone
)

var errNotAcceptable = &problem.Error{Status: http.StatusNotAcceptable, Code: "not_acceptable", Title: "Not acceptable",
	Detail: "Accept-Encoding refuses both gzip and identity (no coding), the only codings this answer is sent in."}

// negotiateEncoding reads the Accept-Encoding fields of a request
// (values, in the order received) for an answer that can be sent as it
// is or gzipped, as RFC 9110 12.5.3 asks:
//
//   - gzip (or x-gzip, its alias) is sent when the client gives it a
//     weight above 0: its own entry, else "*"'s, which stands for every
//     coding not listed by name. Unlisted and not covered by "*", it is
//     not acceptable.
//   - identity (no coding) is acceptable unless excluded by
//     "identity;q=0", or by "*;q=0" without an identity entry of its own.
//     Listed (or covered by "*"), it competes with gzip by weight, gzip
//     winning a tie (the smaller answer); unlisted, it is the fallback,
//     sent only when gzip is not acceptable.
//   - When neither is acceptable the answer is codingNone (the handler
//     answers 406): the client has said it cannot read identity, and the
//     RFC's fallback to identity holds only "unless the identity coding is
//     indicated as unacceptable".
//
// Names and "q" are case-insensitive; q may come at any position among
// an entry's parameters (others are ignored); white space around the
// separators and empty list elements are allowed. A coding listed twice
// takes its lowest weight: never sent where the client said no. No
// field, or an empty one, is identity: nothing asked for gzip. A field
// that does not parse (a weight that is not an RFC qvalue, 0 to 1 with
// at most three decimals; a name that is not a token) is ignored whole,
// as RFC 9110 5.5 allows, which is identity too: a client is never sent
// gzip, nor refused, on the strength of a header it garbled.
func negotiateEncoding(values []string) responseCoding {
	var w codingWeights
	w.gzip, w.identity, w.star = unlisted, unlisted, unlisted
	for _, v := range values {
		if !w.parse(v) {
			return codingIdentity
		}
	}
	gzip := w.gzip
	if gzip == unlisted {
		gzip = max(w.star, 0) // unlisted and no "*": not acceptable
	}
	identity := w.identity
	if identity == unlisted {
		identity = w.star
	}
	switch {
	case gzip > 0 && (identity == unlisted || gzip >= identity):
		return codingGzip
	case identity == unlisted || identity > 0:
		return codingIdentity
	}
	return codingNone
}

// unlisted is the weight of a coding the field does not name.
const unlisted = -1

// codingWeights are the weights, in thousandths, the field gives the
// codings the seat map comes in and "*".
type codingWeights struct {
	gzip, identity, star int
}

// parse adds one Accept-Encoding field value's entries to w; it reports
// false when the value does not parse.
func (w *codingWeights) parse(s string) bool {
	i := 0
	for {
		// Empty elements and the white space around them.
		for i < len(s) && (s[i] == ',' || isOWS(s[i])) {
			i++
		}
		if i == len(s) {
			return true
		}
		start := i
		i = skipToken(s, i)
		if i == start {
			return false
		}
		coding := strings.ToLower(s[start:i])
		weight, weighted := 1000, false
		for {
			for i < len(s) && isOWS(s[i]) {
				i++
			}
			if i == len(s) || s[i] == ',' {
				break
			}
			if s[i] != ';' {
				return false
			}
			// A parameter: name = token or quoted-string.
			for i++; i < len(s) && isOWS(s[i]); i++ {
			}
			nameStart := i
			i = skipToken(s, i)
			name := s[nameStart:i]
			for ; i < len(s) && isOWS(s[i]); i++ {
			}
			if name == "" || i == len(s) || s[i] != '=' {
				return false
			}
			for i++; i < len(s) && isOWS(s[i]); i++ {
			}
			valueStart := i
			if i < len(s) && s[i] == '"' {
				if i = skipQuoted(s, i); i < 0 {
					return false
				}
			} else if i = skipToken(s, i); i == valueStart {
				return false
			}
			if !strings.EqualFold(name, "q") {
				continue
			}
			q, ok := parseQValue(s[valueStart:i])
			if !ok || weighted {
				return false // not a qvalue, or a second weight
			}
			weight, weighted = q, true
		}
		switch coding {
		case "gzip", "x-gzip":
			w.gzip = lowest(w.gzip, weight)
		case "identity":
			w.identity = lowest(w.identity, weight)
		case "*":
			w.star = lowest(w.star, weight)
		}
	}
}

// lowest is a coding's weight once listed (again) with weight.
func lowest(was, weight int) int {
	if was == unlisted {
		return weight
	}
	return min(was, weight)
}

// parseQValue reads an RFC 9110 12.4.2 qvalue, in thousandths: "0",
// "0.5", "1", "1.000" and the like.
func parseQValue(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return whole, true
	}
	if s[1] != '.' || len(s) > 5 {
		return 0, false
	}
	frac, scale := 0, 100
	for _, c := range []byte(s[2:]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		frac += int(c-'0') * scale
		scale /= 10
	}
	if whole == 1000 && frac != 0 {
		return 0, false
	}
	return whole + frac, true
}

func isOWS(c byte) bool { return c == ' ' || c == '\t' }

// skipToken returns the index after the RFC 9110 token at s[i:] (i itself
// when there is none).
func skipToken(s string, i int) int {
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return i
}

func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// skipQuoted returns the index after the quoted-string starting at s[i],
// or -1 when it does not end.
func skipQuoted(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
