package app_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
)

// With SHUTDOWN_DELAY an instance told to stop first answers /readyz 503
// (its own check "instance" failing) while it still books, so that a load
// balancer takes it out of rotation; only then does its port close.
func TestShutdownDelayFailsReadinessFirst(t *testing.T) {
	t.Parallel()
	const delay = 3 * time.Second
	h := newHarnessWith(t, 0, func(c *config.Config) { c.ShutdownDelay = delay })
	addr, cancel, done := h.serveByHand()
	schedule := h.createSchedule(2)
	if got := h.do(request{method: http.MethodGet, path: "/readyz"}); got.status != http.StatusOK {
		t.Fatalf("readyz before shutdown: %d %s", got.status, got.raw)
	}

	began := time.Now()
	cancel() // SIGTERM, as main sees it
	deadline := time.Now().Add(delay / 2)
	for {
		got := h.do(request{method: http.MethodGet, path: "/readyz"})
		if got.status == http.StatusServiceUnavailable {
			checks, _ := got.body["checks"].(map[string]any)
			if checks["instance"] != "unavailable" || checks["postgres"] != "ok" {
				t.Errorf("readyz while draining: %s, want the instance check failing alone", got.raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz still %d %s %v after shutdown began", got.status, got.raw, time.Since(began))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := h.reserve(0, "alice", schedule, 1); got.status != http.StatusOK {
		t.Errorf("a booking during the delay: %d %s, want 200: the instance still serves", got.status, got.raw)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v during SHUTDOWN_DELAY", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if took := time.Since(began); took < delay {
		t.Errorf("Serve returned %v after shutdown began, want at least SHUTDOWN_DELAY (%v)", took, delay)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = conn.Close()
		t.Error("the port still accepts connections after Serve returned")
	}
}
