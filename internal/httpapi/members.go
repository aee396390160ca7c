package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// checkMembers reads body token by token and refuses, naming the member
// or the byte offset, what encoding/json would let through or describe
// vaguely: a body that is not one object, a syntax error, a member name
// that is not exactly one of known (case matters), a member that appears
// twice in one object, and anything after the object.
func checkMembers(body []byte, known []string) *apiError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers of any size are the decoder's to judge
	tok, err := dec.Token()
	if err != nil {
		return syntaxProblem(err, len(body), false)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return malformed(fmt.Sprintf("The body must be one JSON object, not %s.", tokenKind(tok)))
	}
	type level struct {
		object  bool
		wantKey bool
		seen    map[string]struct{}
	}
	stack := []level{{object: true, wantKey: true, seen: map[string]struct{}{}}}
	for len(stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return syntaxProblem(err, len(body), true)
		}
		top := &stack[len(stack)-1]
		if name, ok := tok.(string); ok && top.object && top.wantKey {
			if _, dup := top.seen[name]; dup {
				return malformed(fmt.Sprintf("The member %s appears more than once; send each member once.", quoted(name)))
			}
			if len(stack) == 1 && !slices.Contains(known, name) {
				return malformed(unknownMember(name, known))
			}
			top.seen[name] = struct{}{}
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{object: true, wantKey: true, seen: map[string]struct{}{}})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value ended: the object it belongs to wants a name next.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	end := int(dec.InputOffset())
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return malformed(fmt.Sprintf("Unexpected data after the JSON object at byte offset %d; send one object only.",
			end+len(body[end:])-len(bytes.TrimLeft(body[end:], " \t\r\n"))))
	}
	return nil
}

// syntaxProblem describes a body that is not JSON, by byte offset;
// started tells an object cut short from an empty body.
func syntaxProblem(err error, size int, started bool) *apiError {
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) && !started:
		return malformed("The body is empty; send one JSON object.")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return malformed(fmt.Sprintf("The body ends at byte offset %d, inside the JSON object.", size))
	case errors.As(err, &syntax):
		return malformed(fmt.Sprintf("The body is not valid JSON at byte offset %d: %s.", syntax.Offset, syntax.Error()))
	}
	return malformed("The body is not valid JSON.")
}

func unknownMember(name string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return fmt.Sprintf("The member %s is unknown; member names are case-sensitive: %q.", quoted(name), k)
		}
	}
	return fmt.Sprintf("The member %s is unknown; the members are %s.", quoted(name), strings.Join(known, ", "))
}

// maxQuotedName bounds a member name quoted back to the client: a body
// may hold one of 64 KiB.
const maxQuotedName = 64

func quoted(name string) string {
	if utf8.RuneCountInString(name) > maxQuotedName {
		name = string([]rune(name)[:maxQuotedName]) + "…"
	}
	return strconv.Quote(name)
}

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// describeDecodeError names the member whose value has the wrong type.
func describeDecodeError(err error, size int) *apiError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return malformed(fmt.Sprintf("The member %q must be %s, not %s (byte offset %d).",
			typeErr.Field, jsonKind(typeErr.Type), typeErr.Value, typeErr.Offset))
	}
	return syntaxProblem(err, size, true)
}

// jsonKind names the JSON a Go type decodes from, as a client reads it.
func jsonKind(t reflect.Type) string {
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

// memberNamesByType caches memberNames: request types are few and fixed.
var memberNamesByType sync.Map // reflect.Type -> []string

// memberNames lists the JSON names of the struct dst points to, in
// declaration order.
func memberNames(dst any) []string {
	t := reflect.TypeOf(dst).Elem()
	if names, ok := memberNamesByType.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	memberNamesByType.Store(t, names)
	return names
}
