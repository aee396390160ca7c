package httpapi

import "testing"

func TestNegotiateEncoding(t *testing.T) {
	t.Parallel()
	const (
		identity = codingIdentity
		gzip     = codingGzip
		none     = codingNone
	)
	tests := []struct {
		name   string
		values []string
		want   responseCoding
	}{
		// No preference stated.
		{"no field", nil, identity},
		{"empty field", []string{""}, identity},
		{"only separators", []string{" , ,\t,"}, identity},
		{"other codings only", []string{"br, deflate"}, identity},

		// gzip by name.
		{"gzip", []string{"gzip"}, gzip},
		{"x-gzip", []string{"x-gzip"}, gzip},
		{"upper case", []string{"GZIP"}, gzip},
		{"mixed case", []string{"GZip;Q=0.5"}, gzip},
		{"lower weight than br", []string{"br;q=1, gzip;q=0.5"}, gzip},
		{"white space", []string{" \tgzip \t; \tq=0.8 \t, br"}, gzip},
		{"empty elements", []string{",,gzip,,"}, gzip},
		{"second field", []string{"br", "gzip"}, gzip},
		{"q=1.000", []string{"gzip;q=1.000"}, gzip},
		{"q=0.001", []string{"gzip;q=0.001"}, gzip},
		{"q=1.", []string{"gzip;q=1."}, gzip},

		// gzip refused.
		{"gzip;q=0", []string{"gzip;q=0"}, identity},
		{"gzip;q=0.000", []string{"gzip;q=0.000"}, identity},
		{"x-gzip;q=0", []string{"x-gzip;q=0, *"}, identity},
		{"probe: refused before *", []string{"gzip;q=0, *"}, identity},
		{"probe: refused after *", []string{"*, gzip;q=0"}, identity},
		{"probe: q after another parameter", []string{"gzip;foo=1;q=0"}, identity},
		{"q before another parameter", []string{"gzip;q=0;foo=1"}, identity},
		{"quoted parameter with separators", []string{`gzip;foo="a,b;q=1";q=0, *`}, identity},
		{"Q upper case", []string{"gzip;Q=0, *"}, identity},
		{"listed twice: the lower weight", []string{"gzip, gzip;q=0"}, identity},
		{"refused in a second field", []string{"*", "gzip;q=0"}, identity},
		{"gzip and its alias: the lower weight", []string{"gzip, x-gzip;q=0"}, identity},

		// "*" stands for what is not listed.
		{"star", []string{"*"}, gzip},
		{"star with weight", []string{"*;q=0.3"}, gzip},
		{"star, identity preferred", []string{"*;q=0.3, identity"}, identity},
		{"star refused, gzip listed", []string{"gzip, *;q=0"}, gzip},
		{"star refused, identity listed", []string{"*;q=0, identity"}, identity},

		// Weights decide between gzip and identity; gzip wins a tie.
		{"identity preferred", []string{"gzip;q=0.5, identity"}, identity},
		{"gzip preferred", []string{"gzip, identity;q=0.5"}, gzip},
		{"tie", []string{"gzip;q=0.5, identity;q=0.5"}, gzip},
		{"identity listed only", []string{"identity"}, identity},
		{"identity refused, gzip listed", []string{"gzip, identity;q=0"}, gzip},

		// Nothing acceptable.
		{"identity refused, gzip unlisted", []string{"identity;q=0"}, none},
		{"star refused", []string{"*;q=0"}, none},
		{"both refused", []string{"gzip;q=0, identity;q=0"}, none},
		{"star refused, gzip refused", []string{"gzip;q=0, *;q=0"}, none},
		{"br only, star refused", []string{"br, *;q=0"}, none},

		// A field that does not parse is ignored whole.
		{"q not a number", []string{"gzip;q=abc"}, identity},
		{"q above 1", []string{"gzip;q=1.5"}, identity},
		{"q=1.001", []string{"gzip;q=1.001"}, identity},
		{"q too precise", []string{"gzip;q=0.0001"}, identity},
		{"q negative", []string{"gzip;q=-1"}, identity},
		{"q empty", []string{"gzip;q="}, identity},
		{"q quoted", []string{`gzip;q="0.5"`}, identity},
		{"q with exponent", []string{"gzip;q=1e0"}, identity},
		{"q leading dot", []string{"gzip;q=.5"}, identity},
		{"q twice", []string{"gzip;q=0;q=1"}, identity},
		{"parameter without value", []string{"gzip;q"}, identity},
		{"parameter without name", []string{"gzip;=1"}, identity},
		{"empty parameter", []string{"gzip;"}, identity},
		{"unterminated quote", []string{`gzip;foo="bar`}, identity},
		{"space in a name", []string{"gz ip"}, identity},
		{"not a token", []string{"gzip/1"}, identity},
		{"malformed among good", []string{"gzip", "br;q=x"}, identity},
		{"malformed star refusal is ignored", []string{"*;q=zero"}, identity},
	}
	for _, tt := range tests {
		if got := negotiateEncoding(tt.values); got != tt.want {
			t.Errorf("%s: negotiateEncoding(%q) = %d, want %d", tt.name, tt.values, got, tt.want)
		}
	}
}

func TestParseQValue(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"0": 0, "0.": 0, "0.5": 500, "0.05": 50, "0.123": 123, "1": 1000, "1.0": 1000, "1.000": 1000} {
		if got, ok := parseQValue(s); !ok || got != want {
			t.Errorf("parseQValue(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "2", "01", "0.1234", "1.1", "1.0001", "0,5", ".5", "0.5 ", "+1", "1e0"} {
		if got, ok := parseQValue(s); ok {
			t.Errorf("parseQValue(%q) = %d, accepted", s, got)
		}
	}
}
