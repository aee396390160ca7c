package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrDataNotObject reports event data that does not encode to a JSON object.
var ErrDataNotObject = errors.New("webhook: data must encode to a JSON object")

// Body builds a message body as the specification shapes it:
// {"type": eventType, "timestamp": at in RFC 3339 (UTC), "data": data}.
// data must encode to a JSON object (a struct, a map or a
// json.RawMessage of one), else ErrDataNotObject. at is when the event
// happened, not when it is sent: the body, and so every retry's, stays
// the same.
func Body(eventType string, at time.Time, data any) ([]byte, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("webhook: encode data: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte("{")) {
		return nil, ErrDataNotObject
	}
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{eventType, at.UTC().Format(time.RFC3339Nano), raw})
}
