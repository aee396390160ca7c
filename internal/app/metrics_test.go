package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/reservation"
)

func TestMetricsCountLockOutcomes(t *testing.T) {
	t.Parallel()
	// Without the periodic jobs, whose job locks would count too.
	h := newHarnessWith(t, 1, func(*config.Config) {}, app.WithoutJobs())
	schedule := h.createSchedule(2)
	alice := h.token("alice", "")
	if resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": schedule, "seatId": 1}); resp.status != http.StatusOK {
		t.Fatalf("booking: %d %s", resp.status, resp.raw)
	}
	h.redis.Set(context.Background(), reservation.SeatLockKey(schedule, 2), "another-owner", 10*time.Second)
	if resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": schedule, "seatId": 2}); resp.code() != "seat_locked" {
		t.Fatalf("locked seat: %d %s", resp.status, resp.raw)
	}

	resp, err := h.client.Get(h.bases[0] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	for _, want := range []string{
		`seatlock_lock_acquisitions_total{backend="redis",outcome="acquired"} 1`,
		`seatlock_lock_acquisitions_total{backend="redis",outcome="held"} 1`,
		`seatlock_lock_releases_total{backend="redis",result="released"} 1`,
		`seatlock_lock_hold_seconds_count{backend="redis"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
