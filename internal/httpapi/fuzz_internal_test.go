package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// FuzzDecodeBody decodes arbitrary bytes as each request body. It never
// panics; a refusal is a 400 malformed_json with a readable detail, or,
// for a body whose strings are not all valid UTF-8, a 422
// validation_failed (checkValues names the member); what it accepts,
// encoding/json accepts too, to the same values.
func FuzzDecodeBody(f *testing.F) {
	for _, body := range []string{
		`{"scheduleId":1,"seatId":2}`, ` {"seatId": 2 , "scheduleId" :1}` + "\n", `{"scheduleId":1,"seatId":2,"seatId":3}`,
		`{"SCHEDULEID":1,"seatid":1,"SeatId":2}`, `{"scheduleId":01,"seatId":2}`, `{"scheduleId":1.0,"seatId":2}`,
		`{"scheduleId":123456789012345678,"seatId":2}`, `{"scheduleId":1234567890123456789,"seatId":2}`,
		`{"scheduleId":1,"seatIds":[1,2,3]}`, `{"title":"Dune","startsAt":"2030-01-01T20:00:00Z","seatCount":3}`,
		`{"title":"\u0000"}`, `{"a":[{"a":1,"a":2}]}`, `{"scheduleId":1,"seatId":2}x`, `[]`, `"x"`, `nul`, "{\"seatId\":\xff}",
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecode[reserveRequest](t, body)
		checkDecode[holdRequest](t, body)
		checkDecode[createScheduleRequest](t, body)
	})
}

func checkDecode[T any](t *testing.T, body []byte) {
	t.Helper()
	var got T
	if err := decodeBody(body, &got); err != nil {
		e, ok := err.(*problem.Error)
		badText := ok && !utf8.Valid(body) && e.Status == http.StatusUnprocessableEntity && e.Code == "validation_failed" && len(e.Fields) > 0
		if !badText && (!ok || e.Status != http.StatusBadRequest || e.Code != "malformed_json" || e.Detail == "" || !utf8.ValidString(e.Detail)) {
			t.Fatalf("%T from %q refused as %v", got, body, err)
		}
		return
	}
	var want T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("%T from %q accepted, encoding/json refuses it: %v", got, body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T from %q read as %+v, encoding/json reads %+v", got, body, got, want)
	}
}

// FuzzParseID checks that a path id is accepted exactly when it is the
// canonical spelling of a positive int64.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"7", "+7", "07", "-7", "0", " 7", "7 ", "9223372036854775807", "9223372036854775808", "", "%37", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := parseID(s)
		canonical := id > 0 && strconv.FormatInt(id, 10) == s
		if ok != canonical {
			t.Fatalf("parseID(%q) = %d, %v", s, id, ok)
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && strconv.FormatInt(n, 10) == s && !ok {
			t.Fatalf("parseID(%q) refuses a canonical id", s)
		}
	})
}
