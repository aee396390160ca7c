package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"
	"time"
)

// The access line written directly says what slog's JSON handler writes for
// the same request: the same members in the same order, with the same
// values, odd paths included.
func TestAccessLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 22, 16, 0, 0, 123456789, time.UTC)
	for _, l := range []accessLine{
		{at: at, id: "abc-1", method: "POST", path: "/reservations", status: 409, code: "seat_taken", bytes: 263, duration: 1234567 * time.Nanosecond},
		{at: at, id: "gone", method: "POST", path: "/reservations", status: 499, code: "client_closed_request", bytes: 0, duration: time.Second},
		{at: at, id: "x", method: "GET", path: `/odd/"quoted"/<tag>&\`, status: 200, bytes: 0, duration: 0},
		{at: at, id: "y", method: "GET", path: "/ctl/\x01\n\t\r/ünï/\xff\xfe/\u2028\u2029", status: 404, bytes: 9, duration: time.Millisecond},
		{at: at.In(time.FixedZone("KST", 9*3600)), id: "id", method: "GET", path: "/", status: 503, bytes: 1, duration: 2 * time.Second},
		// The second and its fraction are formatted apart: a fraction
		// with zeros to trim, none at all, a zone west of UTC, and
		// durations of less than a microsecond, of fractions ending in
		// zeros and of hours (which slog writes with an exponent).
		{at: at.Add(-3456789 * time.Nanosecond), id: "z", method: "GET", path: "/", status: 200, duration: 999 * time.Nanosecond},
		{at: at.Truncate(time.Second), id: "z", method: "GET", path: "/", status: 200, duration: 1500 * time.Microsecond},
		{at: at.Truncate(time.Second).In(time.FixedZone("", -(3*3600 + 30*60))), id: "z", method: "GET", path: "/", status: 200, duration: 10 * time.Microsecond},
		{at: time.Date(2026, 11, 22, 16, 0, 1, 100, time.Local), id: "z", method: "GET", path: "/", status: 200, duration: 3*time.Hour + 7*time.Microsecond},
	} {
		var want bytes.Buffer
		h := slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Time(slog.TimeKey, l.at) // the line's own instant
			}
			return a
		}})
		l.log(context.Background(), slog.New(h), nil)
		var got bytes.Buffer
		l.log(context.Background(), nil, &got)
		if n := bytes.Count(got.Bytes(), []byte("\n")); n != 1 || !bytes.HasSuffix(got.Bytes(), []byte("\n")) {
			t.Errorf("access line %q: want one line", got.String())
		}
		if g, w := members(t, got.Bytes()), members(t, want.Bytes()); !reflect.DeepEqual(g, w) {
			t.Errorf("access line:\n got  %s want %s", got.String(), want.String())
		}
	}
}

// members decodes one JSON object line into its members, in order.
func members(t *testing.T, line []byte) [][2]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not a JSON object: %v", line, err)
	}
	var out [][2]any
	for dec.More() {
		name, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var value any
		if err := dec.Decode(&value); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, [2]any{name, value})
	}
	return out
}
