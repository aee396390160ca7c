package httpapi

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"github.com/seatlock/seatlock/internal/reservation"
)

// newValidator returns a validator that names fields by their JSON names
// (`seatId`, not `SeatID`) and knows the service's own tags.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	must(v.RegisterValidation("notblank", func(fl validator.FieldLevel) bool {
		return strings.TrimSpace(fl.Field().String()) != ""
	}))
	// PostgreSQL cannot store NUL in text, and no title needs a control
	// character (tab and newline included) once trimmed: the client is
	// told which field, instead of the store refusing it later.
	must(v.RegisterValidation("nocontrol", func(fl validator.FieldLevel) bool {
		return !strings.ContainsFunc(strings.TrimSpace(fl.Field().String()), unicode.IsControl)
	}))
	// Limits live in the domain; these tags read them, so no number is
	// written twice.
	must(v.RegisterValidation("title", func(fl validator.FieldLevel) bool {
		return utf8.RuneCountInString(strings.TrimSpace(fl.Field().String())) <= reservation.MaxTitleRunes
	}))
	must(v.RegisterValidation("seatcount", func(fl validator.FieldLevel) bool {
		n := fl.Field().Int()
		return n >= 1 && n <= reservation.MaxSeatCount
	}))
	must(v.RegisterValidation("holdseats", func(fl validator.FieldLevel) bool {
		n := fl.Field().Len()
		return n >= 1 && n <= reservation.MaxHoldSeats
	}))
	must(v.RegisterValidation("rfc3339", func(fl validator.FieldLevel) bool {
		_, err := time.Parse(time.RFC3339Nano, fl.Field().String())
		return err == nil
	}))
	return v
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// validate checks dst's `validate` tags and returns the 422 problem naming
// every failing field, or nil.
func validate(v *validator.Validate, dst any) *apiError {
	err := v.Struct(dst)
	if err == nil {
		return nil
	}
	var failures validator.ValidationErrors
	if !errors.As(err, &failures) {
		panic(fmt.Sprintf("httpapi: validating %T: %v", dst, err)) // a programming error
	}
	fields := make([]fieldError, 0, len(failures))
	for _, f := range failures {
		fields = append(fields, fieldError{Field: f.Field(), Detail: describe(f)})
	}
	e := validationFailed(fields)
	return &e
}

func describe(f validator.FieldError) string {
	switch f.Tag() {
	case "required":
		return "is required"
	case "notblank":
		return "must not be blank"
	case "nocontrol":
		return "must not contain control characters (NUL, tab, newline and the like)"
	case "title":
		return fmt.Sprintf("must be at most %d characters", reservation.MaxTitleRunes)
	case "seatcount":
		return fmt.Sprintf("must be between 1 and %d", reservation.MaxSeatCount)
	case "holdseats":
		return fmt.Sprintf("must list 1 to %d seats", reservation.MaxHoldSeats)
	case "unique":
		return "must not repeat a seat"
	case "rfc3339":
		return "must be an RFC 3339 date-time, e.g. 2026-12-24T19:30:00+09:00"
	case "min":
		if f.Kind() == reflect.String {
			return "must be at least " + f.Param() + " characters"
		}
		return "must be at least " + f.Param()
	case "max":
		if f.Kind() == reflect.String {
			return "must be at most " + f.Param() + " characters"
		}
		return "must be at most " + f.Param()
	default:
		return "is invalid"
	}
}
