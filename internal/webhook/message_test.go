package webhook_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/webhook"
)

func TestBody(t *testing.T) {
	at := time.Date(2026, 10, 1, 14, 0, 0, 250_000_000, time.FixedZone("CEST", 2*3600))
	for _, data := range []any{
		map[string]int{"id": 7},
		struct {
			ID int `json:"id"`
		}{7},
		json.RawMessage(` {"id": 7} `),
	} {
		b, err := webhook.Body("reservation.created", at, data)
		if err != nil {
			t.Fatalf("Body(%T): %v", data, err)
		}
		if want := `{"type":"reservation.created","timestamp":"2026-10-01T12:00:00.25Z","data":{"id":7}}`; string(b) != want {
			t.Errorf("Body(%T) = %s\nwant %s", data, b, want)
		}
	}
	for _, data := range []any{nil, 7, "x", []int{1}, json.RawMessage(`[]`)} {
		if _, err := webhook.Body("t", at, data); !errors.Is(err, webhook.ErrDataNotObject) {
			t.Errorf("Body(%#v) = %v, want ErrDataNotObject", data, err)
		}
	}
	if _, err := webhook.Body("t", at, map[string]any{"f": func() {}}); err == nil {
		t.Error("Body of data json cannot encode: no error")
	}
}
