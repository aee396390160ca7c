package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// The hand-written access line is byte for byte what slog's JSON handler
// writes for the same request.
func TestAccessLineMatchesSlog(t *testing.T) {
	at := time.Date(2026, 11, 22, 16, 0, 0, 123456789, time.UTC)
	for _, l := range []accessLine{
		{at: at, id: "abc-1", method: "POST", path: "/reservations", status: 409, code: "seat_taken", bytes: 263, duration: 1234567 * time.Nanosecond},
		{at: at, id: "gone", method: "POST", path: "/reservations", status: 499, code: "client_closed_request", bytes: 0, duration: time.Second},
		{at: at, id: "x", method: "GET", path: `/odd/"quoted"/<tag>&\`, status: 200, bytes: 0, duration: 0},
		{at: at, id: "y", method: "GET", path: "/ctl/\x01\n\t\r/ünï/\xff\xfe/\u2028\u2029", status: 404, bytes: 9, duration: time.Millisecond},
		{at: at.In(time.FixedZone("KST", 9*3600)), id: "id", method: "GET", path: "/", status: 503, bytes: 1, duration: 2 * time.Second},
	} {
		var want bytes.Buffer
		h := slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Time(slog.TimeKey, l.at) // the line's own instant
			}
			return a
		}})
		slog.New(h).LogAttrs(context.Background(), slog.LevelInfo, "request", l.attrs()...)
		var got bytes.Buffer
		l.writeTo(&got)
		if got.String() != want.String() {
			t.Errorf("access line:\n got  %s want %s", got.String(), want.String())
		}
	}
}
