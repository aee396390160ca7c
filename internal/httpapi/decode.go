package httpapi

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	// The v2 JSON API (proposed for encoding/json/v2) reads request
	// bodies: unlike encoding/json it matches member names exactly and
	// refuses a member sent twice, both of which the API answers 400.
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// maxBodyBytes is the largest request body accepted (413 beyond), but
// for a schedule's.
const maxBodyBytes = 64 << 10

// maxScheduleBodyBytes is the largest body of POST /schedules: enough for
// every schedule within the layout limits (reservation.MaxSections
// sections of reservation.MaxRows rows, every text as long as allowed),
// written without white space between tokens even with every character
// of every string as a \u escape; TestTheLargestScheduleFitsItsBodyLimit
// builds that body and sends it. Only admins reach it: the token is
// checked before the body is read.
const maxScheduleBodyBytes = 32 << 20

// bodyLimit is how large a request's body may be, and the problem past it.
type bodyLimit struct {
	bytes    int64
	tooLarge error
}

var (
	errTooLarge = &problem.Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Title: "Payload too large",
		Detail: "The body must be at most 64 KiB."}
	errScheduleTooLarge = &problem.Error{Status: http.StatusRequestEntityTooLarge, Code: "payload_too_large", Title: "Payload too large",
		Detail: "The body of a schedule must be at most 32 MiB."}

	anyBody      = bodyLimit{maxBodyBytes, errTooLarge}
	scheduleBody = bodyLimit{maxScheduleBodyBytes, errScheduleTooLarge}
	errMediaType = &problem.Error{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Title: "Unsupported media type",
		Detail: "Send the body as Content-Type: application/json."}
)

// isJSONMediaType accepts application/json, with no charset or UTF-8. The
// exact common spellings skip parsing.
func isJSONMediaType(contentType string) bool {
	switch contentType {
	case "application/json", "application/json; charset=utf-8", "application/json; charset=UTF-8":
		return true
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// decodeJSON reads exactly one JSON object into dst: the right media type,
// at most maxBodyBytes, member names exactly as documented and each once,
// nothing after the object.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	return decodeJSONWithin(w, r, dst, anyBody)
}

// decodeJSONWithin is decodeJSON for a body of at most limit.
func decodeJSONWithin(w http.ResponseWriter, r *http.Request, dst any, limit bodyLimit) error {
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		return errMediaType
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return decodeBody(body, dst)
}

// readBody reads the request's body, at most limit (its problem past it,
// told by Content-Length before reading when it says so).
func readBody(w http.ResponseWriter, r *http.Request, limit bodyLimit) ([]byte, error) {
	if r.ContentLength > limit.bytes {
		return nil, limit.tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit.bytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, limit.tooLarge
		}
		return nil, problem.UnreadableBody
	}
	return body, nil
}

// decodeOptions refuse members the destination does not have; invalid
// UTF-8 is read as U+FFFD, so that checkValues can name the field it is
// in. Duplicate and case-mismatched names are refused by the library
// itself.
var decodeOptions = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowInvalidUTF8(true))

// decodeBody is decodeJSON once the body is read; a refusal is 400
// malformed_json naming the member or the byte offset, or 422 naming a
// text that is not valid UTF-8.
func decodeBody(body []byte, dst any) error {
	if err := unmarshalBody(body, dst); err != nil {
		return err
	}
	return checkValues(body)
}

// unmarshalBody reads body into dst as decodeBody does, but lets null
// members and invalid UTF-8 through.
func unmarshalBody(body []byte, dst any) error {
	if string(bytes.Trim(body, " \t\r\n")) == "null" {
		// Decoding null into a struct leaves it as it was.
		return problem.Malformed("The body must be one JSON object, not null.")
	}
	err := json.Unmarshal(body, dst, decodeOptions)
	if err == nil {
		return nil
	}
	var (
		syntax   *jsontext.SyntacticError
		semantic *json.SemanticError
	)
	switch {
	case errors.As(err, &syntax) && syntax.Err == jsontext.ErrDuplicateName:
		return problem.Malformed(fmt.Sprintf("The member %s appears more than once; send each member once.",
			quoted(syntax.JSONPointer.LastToken())))
	case errors.As(err, &syntax) && errors.Is(syntax.Err, io.ErrUnexpectedEOF):
		if len(bytes.Trim(body, " \t\r\n")) == 0 {
			return problem.Malformed("The body is empty; send one JSON object.")
		}
		return problem.Malformed(fmt.Sprintf("The body ends at byte offset %d, inside the JSON object.", len(body)))
	case errors.As(err, &syntax):
		return problem.Malformed(fmt.Sprintf("The body is not valid JSON at byte offset %d: %v.", syntax.ByteOffset, syntax.Err))
	case errors.As(err, &semantic) && semantic.Err == json.ErrUnknownName:
		return problem.Malformed(unknownMember(semantic.JSONPointer.LastToken(), memberNames(dst)))
	case errors.As(err, &semantic) && semantic.JSONPointer == "":
		return problem.Malformed(fmt.Sprintf("The body must be one JSON object, not %s.", kindName(semantic.JSONKind)))
	case errors.As(err, &semantic):
		got := kindName(semantic.JSONKind)
		if semantic.JSONKind == '0' && len(semantic.JSONValue) > 0 {
			got = "the number " + truncate(string(semantic.JSONValue))
		}
		return problem.Malformed(fmt.Sprintf("The member %s must be %s, not %s (byte offset %d).",
			quoted(fieldName(semantic.JSONPointer)), jsonKind(semantic.GoType), got, semantic.ByteOffset))
	}
	return problem.Malformed("The body is not valid JSON.")
}

func unknownMember(name string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return fmt.Sprintf("The member %s is unknown; member names are case-sensitive: %q.", quoted(name), k)
		}
	}
	return fmt.Sprintf("The member %s is unknown; the members are %s.", quoted(name), strings.Join(known, ", "))
}

// maxQuoted bounds what of a body is quoted back to the client: a member
// name or a number may be 64 KiB long.
const maxQuoted = 64

func truncate(s string) string {
	if utf8.RuneCountInString(s) > maxQuoted {
		s = string([]rune(s)[:maxQuoted]) + "…"
	}
	return s
}

func quoted(name string) string { return strconv.Quote(truncate(name)) }

// fieldName spells a JSON pointer as the validation errors do:
// seatIds[1] for /seatIds/1.
func fieldName(p jsontext.Pointer) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		if b.Len() == 0 {
			b.WriteString(tok)
		} else {
			b.WriteString("[" + tok + "]")
		}
	}
	return b.String()
}

// kindName names a kind of JSON value as a client reads it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "null"
}

// jsonKind names the JSON a Go type decodes from, as a client reads it.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonKind(t.Elem()), "an "), "a ") + "s"
	}
	return "an object"
}

// memberNames lists the JSON names of the struct dst points to, in
// declaration order.
func memberNames(dst any) []string {
	t := reflect.TypeOf(dst).Elem()
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		names = append(names, cmp.Or(name, f.Name))
	}
	return names
}

// value is *p, or the zero value of a member that was not sent.
func value[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
