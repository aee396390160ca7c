package app_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// proxied returns a harness whose single instance reaches Redis or
// PostgreSQL through a proxy the test can cut.
func proxied(t *testing.T, dependency string) (*harness, *lockenv.Proxy) {
	t.Helper()
	h := newHarness(t, 0)
	cfg := h.cfg
	var target *url.URL
	var err error
	if dependency == "redis" {
		target, err = url.Parse(cfg.RedisURL)
	} else {
		target, err = url.Parse(cfg.DatabaseURL)
	}
	if err != nil {
		t.Fatal(err)
	}
	proxy := lockenv.NewProxy(t, target.Host)
	target.Host = proxy.Addr()
	if dependency == "redis" {
		cfg.RedisURL = target.String()
	} else {
		cfg.DatabaseURL = target.String()
	}
	h.bases = append(h.bases, h.serve(cfg))
	return h, proxy
}

func TestDependencyDown(t *testing.T) {
	t.Parallel()
	for _, dependency := range []string{"redis", "postgres"} {
		t.Run(dependency, func(t *testing.T) {
			t.Parallel()
			h, proxy := proxied(t, dependency)
			schedule := h.createSchedule(2)
			alice := h.token("alice", "")
			if resp := h.do(request{method: http.MethodGet, path: "/readyz"}); resp.status != http.StatusOK {
				t.Fatalf("readyz before the cut: %d %s", resp.status, resp.raw)
			}

			proxy.Cut()

			resp := h.postJSON("/reservations", alice, map[string]any{"scheduleId": schedule, "seatId": 1})
			expectProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
			expectNoLeak(t, resp)
			if ra := resp.header.Get("Retry-After"); ra != "2" {
				t.Errorf("Retry-After = %q, want 2", ra)
			}
			resp = h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
			if dependency == "postgres" {
				expectProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
			} else if resp.status != http.StatusOK {
				t.Errorf("seat map needs no Redis: %d %s", resp.status, resp.raw)
			}
			resp = h.do(request{method: http.MethodGet, path: "/readyz"})
			expectProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
			checks, _ := resp.body["checks"].(map[string]any)
			if checks[dependency] != "unavailable" || resp.header.Get("Retry-After") == "" {
				t.Errorf("readyz = %s, want %s unavailable with Retry-After", resp.raw, dependency)
			}
			if n := h.reservationRows(schedule, 1); n != 0 {
				t.Errorf("rows = %d, want 0", n)
			}
		})
	}
}
