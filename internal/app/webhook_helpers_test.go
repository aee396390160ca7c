package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/auth"
)

// webhookHook is a URL every webhook test may register with the default
// settings: https, on a public address (TEST-NET-3, which no DNS lookup
// is needed for).
const webhookHook = "https://203.0.113.7/seatlock"

func (h *harness) admin() string { return h.token("admin", auth.RoleAdmin) }

// webhookCall sends an admin's request to path with body (none when "").
func (h *harness) webhookCall(method, path, body string) response {
	h.t.Helper()
	req := request{method: method, path: path, token: h.admin(), body: body}
	if body != "" {
		req.contentType = "application/json"
	}
	return h.do(req)
}

// createWebhook registers an endpoint from a JSON body: 201 or the test
// fails.
func (h *harness) createWebhook(body string) response {
	h.t.Helper()
	resp := h.webhookCall(http.MethodPost, "/webhooks", body)
	if resp.status != http.StatusCreated {
		h.t.Fatalf("create webhook %s: %d %s", body, resp.status, resp.raw)
	}
	return resp
}

// webhookBody is a create body for url.
func webhookBody(url string) string {
	b, _ := json.Marshal(map[string]string{"url": url})
	return string(b)
}

// insertDelivery writes a delivery of a new event to the endpoint's log
// directly, as the worker would, and returns the event's id.
func (h *harness) insertDelivery(endpoint string, seq int64, status string) string {
	h.t.Helper()
	eventID := "msg_" + uuid.NewString()[:8]
	_, err := h.pool.Exec(context.Background(), `INSERT INTO webhook_deliveries
		(endpoint_id, seq, event_id, type, object_id, status, attempts, last_attempt_at, last_status_code, last_error, next_attempt_at)
		VALUES ($1, $2, $3, 'hold.created', gen_random_uuid(), $4, 1, now(), 500, 'answered 500',
			CASE WHEN $4 = 'pending' THEN now() + interval '1 hour' END)`, endpoint, seq, eventID, status)
	if err != nil {
		h.t.Fatal(err)
	}
	return eventID
}

// slogDebug logs every record, at any level, as JSON lines to w.
func slogDebug(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// members are a JSON object's member names.
func members(body map[string]any) map[string]bool {
	names := map[string]bool{}
	for name := range body {
		names[name] = true
	}
	return names
}

// items reads an array member of a body as objects.
func items(t *testing.T, body map[string]any, member string) []map[string]any {
	t.Helper()
	list, ok := body[member].([]any)
	if !ok {
		t.Fatalf("%s is not an array: %v", member, body)
	}
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i], _ = v.(map[string]any)
	}
	return out
}
