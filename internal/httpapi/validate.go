package httpapi

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/go-playground/validator/v10"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// newValidator returns a validator that names fields by their JSON names
// (`seatId`, not `SeatID`) and knows the edge's own tags. The tags say
// only what the domain cannot: that a member was sent, that a text can be
// stored, that a date parses. Every limit of a value is the domain's.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	// PostgreSQL cannot store NUL in text, and no title needs a control
	// character (tab and newline included) once trimmed: the client is
	// told which field, instead of the store refusing it later. (Labels
	// and categories are not trimmed: the domain refuses their white
	// space.)
	must(v.RegisterValidation("nocontrol", func(fl validator.FieldLevel) bool {
		return !strings.ContainsFunc(strings.TrimSpace(fl.Field().String()), unicode.IsControl)
	}))
	must(v.RegisterValidation("rfc3339", func(fl validator.FieldLevel) bool {
		_, ok := parseDateTime(fl.Field().String())
		return ok
	}))
	// An optional text member, when sent, says something: "" is refused
	// rather than read as the member left out.
	must(v.RegisterValidation("nonempty", func(fl validator.FieldLevel) bool {
		return fl.Field().String() != ""
	}))
	return v
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// validate returns the 422 problem naming every bad field of dst, in the
// order of its members, or nil: those dst's `validate` tags refuse, and
// every other field the domain refuses in invalid (its verdicts on the same
// values).
func validate(v *validator.Validate, dst any, invalid ...error) error {
	var fields []problem.FieldError
	if err := v.Struct(dst); err != nil {
		var failures validator.ValidationErrors
		if !errors.As(err, &failures) {
			panic(fmt.Sprintf("httpapi: validating %T: %v", dst, err)) // a programming error
		}
		for _, f := range failures {
			fields = append(fields, problem.FieldError{Field: fieldPath(f), Detail: describe(f)})
		}
	}
	refused := len(fields)
	for _, f := range problem.InvalidFields(errors.Join(invalid...)) {
		if !slices.ContainsFunc(fields[:refused], func(g problem.FieldError) bool { return member(g.Field) == member(f.Field) }) {
			fields = append(fields, f)
		}
	}
	if fields == nil {
		return nil
	}
	order := memberNames(dst)
	slices.SortStableFunc(fields, func(a, b problem.FieldError) int {
		return cmp.Compare(slices.Index(order, member(a.Field)), slices.Index(order, member(b.Field)))
	})
	return problem.ValidationFailed(fields)
}

// member is the request member a field error is about: seatIds for
// seatIds[2].
func member(field string) string {
	if i := strings.IndexAny(field, "[."); i >= 0 {
		return field[:i]
	}
	return field
}

// fieldPath names a failed field by its JSON path from the body's top
// ("layout.rows[2].label"): the namespace without the struct's name.
func fieldPath(f validator.FieldError) string {
	_, path, _ := strings.Cut(f.Namespace(), ".")
	if path == "" {
		return f.Field()
	}
	return path
}

func describe(f validator.FieldError) string {
	switch f.Tag() {
	case "required":
		return "is required"
	case "required_without":
		return "is required unless " + jsonName(f.Param()) + " is given"
	case "excluded_with":
		return "must not be given with " + jsonName(f.Param())
	case "nocontrol":
		return "must not contain control characters (NUL, tab, newline and the like)"
	case "rfc3339":
		return "must be an RFC 3339 date-time, e.g. 2026-12-24T19:30:00+09:00"
	case "nonempty":
		return "must not be empty; leave the member out instead"
	case "min":
		return "must be at least " + f.Param()
	default:
		return "is invalid"
	}
}

// jsonName is the JSON name of a Go field named in a validate tag's
// parameter ("Layout" is "layout").
func jsonName(goName string) string {
	if goName == "" {
		return goName
	}
	return strings.ToLower(goName[:1]) + goName[1:]
}
