package app_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
)

// RATE_LIMIT_USER holds across instances: a user's requests on A and B
// draw on one budget, refusals are 429 rate_limited with Retry-After, and
// other users are not affected.
func TestUserRateLimitIsSharedByInstances(t *testing.T) {
	t.Parallel()
	const perSecond = 2
	h := newHarnessWith(t, 2, func(cfg *config.Config) { cfg.RateLimitUser = perSecond })
	greedy := h.token(fmt.Sprintf("greedy-%d", time.Now().UnixNano()), "")
	start := time.Now()
	admitted, limited := 0, 0
	for i := range 8 {
		resp := h.do(request{method: http.MethodGet, path: "/reservations/00000000-0000-0000-0000-000000000000", token: greedy, base: i % 2})
		switch resp.status {
		case http.StatusTooManyRequests:
			limited++
			expectProblem(t, resp, http.StatusTooManyRequests, "rate_limited")
			if s, err := strconv.Atoi(resp.header.Get("Retry-After")); err != nil || s < 1 {
				t.Errorf("Retry-After = %q, want whole seconds", resp.header.Get("Retry-After"))
			}
		case http.StatusNotFound:
			admitted++
		default:
			t.Fatalf("request %d: %d %s", i, resp.status, resp.raw)
		}
	}
	// A burst of perSecond, then one more every 1/perSecond seconds, plus
	// what the instances may admit on their own before they charge the
	// shared budget (half the limit: see internal/ratelimit).
	most := perSecond + int(time.Since(start)*perSecond/time.Second) + 1 + perSecond/2
	if limited == 0 || admitted < perSecond || admitted > most {
		t.Errorf("admitted %d, limited %d over %v; want %d to %d admitted", admitted, limited, time.Since(start), perSecond, most)
	}
	other := h.do(request{method: http.MethodGet, path: "/reservations/00000000-0000-0000-0000-000000000000", token: h.token("patient", "")})
	if other.status != http.StatusNotFound {
		t.Errorf("another user: %d %s, want 404", other.status, other.raw)
	}
}

// RATE_LIMIT_IP limits the public routes per client address; health and
// readiness are never limited.
func TestAddressRateLimitSparesHealthChecks(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.RateLimitIP = 1 })
	schedule := h.createSchedule(1)
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	statuses := []int{}
	for range 3 {
		statuses = append(statuses, h.do(request{method: http.MethodGet, path: path}).status)
	}
	if !strings.Contains(fmt.Sprint(statuses), "429") {
		t.Errorf("three quick seat-map reads at 1/s: %v, want a 429", statuses)
	}
	for _, probe := range []string{"/healthz", "/readyz", "/healthz", "/readyz", "/healthz"} {
		if got := h.do(request{method: http.MethodGet, path: probe}); got.status != http.StatusOK {
			t.Errorf("GET %s past the address limit: %d, want 200", probe, got.status)
		}
	}
}

// Behind a trusted proxy the per-address limit counts each client the
// proxy names in X-Forwarded-For, not the proxy; a peer that is not
// trusted is counted as itself whatever the header says.
func TestAddressRateLimitCountsClientsBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	reads := func(h *harness, path, client string) []int {
		var statuses []int
		for range 3 {
			statuses = append(statuses, h.do(request{method: http.MethodGet, path: path, header: map[string]string{"X-Forwarded-For": client}}).status)
		}
		return statuses
	}
	trusted := newHarnessWith(t, 1, func(cfg *config.Config) {
		cfg.RateLimitIP = 1
		cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	path := fmt.Sprintf("/schedules/%d/seats", trusted.createSchedule(1))
	if got := reads(trusted, path, "198.51.100.1"); !strings.Contains(fmt.Sprint(got), "429") {
		t.Errorf("client A past its limit: %v, want a 429", got)
	}
	if got := trusted.do(request{method: http.MethodGet, path: path, header: map[string]string{"X-Forwarded-For": "198.51.100.2"}}); got.status != http.StatusOK {
		t.Errorf("client B behind the same proxy: %d, want 200 (a limit of its own)", got.status)
	}
	// A client's own entry before the proxy's is not its key.
	spoofed := trusted.do(request{method: http.MethodGet, path: path, header: map[string]string{"X-Forwarded-For": "203.0.113.9, 198.51.100.1"}})
	expectProblem(t, spoofed, http.StatusTooManyRequests, "rate_limited")

	untrusted := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.RateLimitIP = 1 })
	path = fmt.Sprintf("/schedules/%d/seats", untrusted.createSchedule(1))
	statuses := []int{}
	for i := range 3 {
		statuses = append(statuses, untrusted.do(request{method: http.MethodGet, path: path,
			header: map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", 10+i)}}).status)
	}
	if !strings.Contains(fmt.Sprint(statuses), "429") {
		t.Errorf("an untrusted peer naming three clients: %v, want a 429 (one address)", statuses)
	}
}
