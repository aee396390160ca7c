package httpapi

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// checkValues refuses what a body's decoding lets through: null, which no
// member of the API takes (400, as any value of the wrong type, rather
// than read as the member left out), and a string that is not valid UTF-8
// (invalid bytes, or an escaped lone surrogate such as \ud800), which
// would otherwise be stored with U+FFFD in its place (422 naming the
// field). body has been decoded once already: it is one JSON object.
func checkValues(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	return checkValue(dec, "")
}

// checkValue checks the value dec is at, named field ("" for the body,
// "layout.rows[2].label" inside it).
func checkValue(dec *jsontext.Decoder, field string) error {
	switch dec.PeekKind() {
	case 'n':
		return problem.Malformed(fmt.Sprintf("The member %s must not be null; send a value or leave the member out.", quoted(field)))
	case '"':
		v, err := dec.ReadValue()
		if err != nil || v.IsValid() {
			return nil
		}
		return problem.ValidationFailed([]problem.FieldError{{Field: field,
			Detail: "must be valid UTF-8: no invalid bytes and no unpaired surrogate escapes (\\ud800)"}})
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil
		}
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil
			}
			member := name.String()
			if field != "" {
				member = field + "." + member
			}
			if err := checkValue(dec, member); err != nil {
				return err
			}
		}
		_, _ = dec.ReadToken()
		return nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil
		}
		for i := 0; dec.PeekKind() != ']' && dec.PeekKind() != 0; i++ {
			if err := checkValue(dec, field+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, _ = dec.ReadToken()
		return nil
	}
	_ = dec.SkipValue()
	return nil
}
