package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/testenv"
)

// logLines collects an instance's JSON log lines.
type logLines struct{ testenv.SyncBuffer }

// entries returns the lines logged so far, decoded.
func (l *logLines) entries() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// requestLines waits up to within for the request lines of path to be
// logged, and returns them.
func (l *logLines) requestLines(path string, within time.Duration) []map[string]any {
	deadline := time.Now().Add(within)
	for {
		var lines []map[string]any
		for _, e := range l.entries() {
			if e["msg"] == "request" && e["path"] == path {
				lines = append(lines, e)
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newLoggedHarness is newHarness whose one instance logs into the returned
// lines.
func newLoggedHarness(t *testing.T) (*harness, *logLines) {
	t.Helper()
	h := newHarness(t, 0)
	lines := &logLines{}
	h.logger = slog.New(slog.NewJSONHandler(lines, nil))
	h.bases = []string{h.serve(h.cfg)}
	return h, lines
}

// A client that hangs up while its booking waits for the seat's lock is
// not the service's error: one INFO request line with status 499, no
// ERROR, no booking.
func TestClientGoneIsNotAnError(t *testing.T) {
	t.Parallel()
	h, logs := newLoggedHarness(t)
	schedule := h.createSchedule(1)
	h.holdSeat(schedule, 1, 10*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.bases[0]+"/reservations",
		strings.NewReader(fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token("leaver", ""))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "wait=5")
	if resp, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("the client should have given up waiting; got %v", err)
	}

	gone := logs.requestLines("/reservations", 10*time.Second)
	if len(gone) != 1 {
		t.Fatalf("request lines for the booking = %v, want one", gone)
	}
	line := gone[0]
	if line["level"] != "INFO" || line["status"] != float64(499) || line["code"] != "client_closed_request" {
		t.Errorf("request line = %v, want INFO, status 499, code client_closed_request", line)
	}
	for _, e := range logs.entries() {
		if e["level"] == "ERROR" || e["status"] == float64(500) {
			t.Errorf("logged %v", e)
		}
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("rows = %d, want 0", n)
	}
}

// The request log names the problem code of every problem answer.
func TestRequestLogCarriesTheProblemCode(t *testing.T) {
	t.Parallel()
	h, logs := newLoggedHarness(t)
	schedule := h.createSchedule(1)
	alice, bob := h.token("alice", ""), h.token("bob", "")
	body := fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)
	h.do(request{method: http.MethodPost, path: "/reservations", token: alice, contentType: "application/json", body: body})
	// Another user's: the owner's own retry would be answered 200.
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: bob, contentType: "application/json", body: body})
	expectProblem(t, resp, http.StatusConflict, "seat_taken")

	var codes []any
	for _, e := range logs.entries() {
		if e["msg"] == "request" && e["path"] == "/reservations" {
			codes = append(codes, e["code"])
		}
	}
	if len(codes) != 2 || codes[0] != nil || codes[1] != "seat_taken" {
		t.Errorf("codes in the booking lines = %v, want [<nil> seat_taken]", codes)
	}
}

// A client that hangs up while its booking waits on a slow PostgreSQL is
// not an error either: 499 at INFO, and no ERROR line although the
// booking's statement was cut short.
func TestClientGoneDuringASlowWriteIsNotAnError(t *testing.T) {
	t.Parallel()
	// Without the periodic jobs: they meet the slow PostgreSQL too, and a
	// failed job is rightly an error.
	h := newHarnessWith(t, 0, func(*config.Config) {}, app.WithoutJobs())
	logs := &logLines{}
	h.logger = slog.New(slog.NewJSONHandler(logs, nil))
	cfg := h.cfg
	var pgProxy *lockenv.Proxy
	cfg.DatabaseURL, pgProxy = proxiedURL(t, cfg.DatabaseURL)
	h.bases = []string{h.serve(cfg)}
	schedule := h.createSchedule(1)
	h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d", schedule)}) // cached before the fault

	pgProxy.AddToxic(lockenv.Toxic{Name: "slow", Type: "latency", Stream: "downstream",
		Attributes: map[string]any{"latency": 1500}})
	defer pgProxy.RemoveToxic("slow")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.bases[0]+"/reservations",
		strings.NewReader(fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.token("leaver", ""))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("the client should have hung up; got %d", resp.StatusCode)
	}

	lines := logs.requestLines("/reservations", 15*time.Second)
	if len(lines) != 1 {
		t.Fatalf("request lines for the booking = %v, want one", lines)
	}
	if line := lines[0]; line["status"] != float64(499) || line["level"] != "INFO" {
		t.Fatalf("request line = %v, want INFO with status 499", line)
	}
	for _, e := range logs.entries() {
		if e["level"] == "ERROR" {
			t.Errorf("logged %v", e)
		}
	}
}
