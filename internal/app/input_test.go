package app_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestRequestBodyErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	alice := h.token("alice", "")
	huge := `{"scheduleId":1,"seatId":1,"pad":"` + strings.Repeat("x", 70<<10) + `"}`
	tests := []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"syntax error", "application/json", `{"scheduleId":1,`, 400, "malformed_json"},
		{"wrong type", "application/json", `{"scheduleId":"1","seatId":1}`, 400, "malformed_json"},
		{"fraction", "application/json", `{"scheduleId":1,"seatId":1.5}`, 400, "malformed_json"},
		{"unknown field", "application/json", `{"scheduleId":1,"seatId":1,"userId":"bob"}`, 400, "malformed_json"},
		{"trailing object", "application/json", `{"scheduleId":1,"seatId":1}{}`, 400, "malformed_json"},
		{"trailing garbage", "application/json", `{"scheduleId":1,"seatId":1} x`, 400, "malformed_json"},
		{"null", "application/json", `null`, 400, "malformed_json"},
		{"array", "application/json", `[{"scheduleId":1,"seatId":1}]`, 400, "malformed_json"},
		{"empty", "application/json", ``, 400, "malformed_json"},
		{"too large", "application/json", huge, 413, "payload_too_large"},
		{"no content type", "", `{"scheduleId":1,"seatId":1}`, 415, "unsupported_media_type"},
		{"text/plain", "text/plain", `{"scheduleId":1,"seatId":1}`, 415, "unsupported_media_type"},
		{"form", "application/x-www-form-urlencoded", `scheduleId=1&seatId=1`, 415, "unsupported_media_type"},
		{"latin1 charset", "application/json; charset=latin1", `{"scheduleId":1,"seatId":1}`, 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: "/reservations", token: alice, contentType: tt.contentType, body: tt.body})
			expectProblem(t, resp, tt.status, tt.code)
		})
	}
	var n int
	if err := h.pool.QueryRow(t.Context(), `SELECT count(*) FROM reservations`).Scan(&n); err != nil || n != 0 {
		t.Errorf("reservations stored = %d (%v), want 0", n, err)
	}
}

func TestJSONWithCharsetAccepted(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(1)
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("alice", ""),
		contentType: "application/json; charset=UTF-8", body: `{"scheduleId":` + strconv.FormatInt(schedule, 10) + `,"seatId":1}`})
	if resp.status != http.StatusOK {
		t.Fatalf("charset=UTF-8: %d %s", resp.status, resp.raw)
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	expectProblem(t, h.do(request{method: http.MethodGet, path: "/nope"}), http.StatusNotFound, "not_found")
	resp := h.do(request{method: http.MethodDelete, path: "/healthz"})
	expectProblem(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
}

func TestHealth(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	if resp := h.do(request{method: http.MethodGet, path: "/healthz"}); resp.status != http.StatusOK {
		t.Errorf("healthz: %d %s", resp.status, resp.raw)
	}
	resp := h.do(request{method: http.MethodGet, path: "/readyz"})
	if resp.status != http.StatusOK || resp.body["status"] != "ready" {
		t.Errorf("readyz: %d %s", resp.status, resp.raw)
	}
	first, second := resp.header.Get("X-Request-Id"), h.do(request{method: http.MethodGet, path: "/readyz"}).header.Get("X-Request-Id")
	if len(first) < 18 || first == second || !strings.HasPrefix(second, first[:17]) {
		t.Errorf("X-Request-Id = %q then %q, want generated ids: one process prefix, a counter", first, second)
	}
}
