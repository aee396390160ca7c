package app_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

// Fault-suite settings: a short lease and wait keep every fault's recovery
// within seconds, and the request deadline (LOCK_MAX_WAIT + 10 s) is what
// bounds a request stalled by a dependency.
const (
	faultLockTTL     = 2 * time.Second
	faultLockMaxWait = time.Second
	// faultPatience bounds each wait of the suite (a 503, a recovery, the
	// last lock key gone): far above what the service needs, so that a
	// busy machine does not fail the suite, and far below a hang.
	faultPatience = 30 * time.Second
)

// faultTuning is the configuration every fault test starts from.
func faultTuning(cfg *config.Config) {
	cfg.LockTTL = faultLockTTL
	cfg.LockMaxWait = faultLockMaxWait
}

// proxiedURL returns rawURL with its host replaced by a fault proxy in front
// of it.
func proxiedURL(t *testing.T, rawURL string) (string, *testenv.Proxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	return u.String(), proxy
}

// withParam returns rawURL with the query parameter key set to value.
func withParam(t *testing.T, rawURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// faultyHarness is a harness with one instance whose Redis and PostgreSQL
// connections both go through fault proxies.
func faultyHarness(t *testing.T) (h *harness, redisProxy, pgProxy *testenv.Proxy) {
	t.Helper()
	h = newHarnessWith(t, 0, faultTuning)
	cfg := h.cfg
	cfg.RedisURL, redisProxy = proxiedURL(t, cfg.RedisURL)
	cfg.DatabaseURL, pgProxy = proxiedURL(t, cfg.DatabaseURL)
	h.bases = append(h.bases, h.serve(cfg))
	return h, redisProxy, pgProxy
}

// timed runs call and says how long its answer took.
func timed(call func() response) (response, time.Duration) {
	start := time.Now()
	resp := call()
	return resp, time.Since(start)
}

// expectUnavailable checks the answer of a request that met a failed
// dependency: 503 unavailable with Retry-After and no internal detail.
func expectUnavailable(t *testing.T, resp response) {
	t.Helper()
	expectProblem(t, resp, http.StatusServiceUnavailable, "unavailable")
	expectNoLeak(t, resp)
	if resp.header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After: %s", resp.raw)
	}
}

// bookUntilOK books seat for user through instance base until it is
// answered 200, and returns how long that took. In between, only the
// answers of a service finding its feet are accepted: 503 unavailable and
// 409 seat_locked (an orphaned lock waiting for its TTL or its background
// release).
func (h *harness) bookUntilOK(base int, user string, schedule int64, seat int) time.Duration {
	h.t.Helper()
	start := time.Now()
	for {
		resp := h.reserve(base, user, schedule, seat)
		switch {
		case resp.status == http.StatusOK:
			return time.Since(start)
		case resp.status == http.StatusServiceUnavailable && resp.code() == "unavailable",
			resp.status == http.StatusConflict && resp.code() == "seat_locked":
		default:
			h.t.Fatalf("booking seat %d while recovering: %d %s", seat, resp.status, resp.raw)
		}
		if time.Since(start) > faultPatience {
			h.t.Fatalf("seat %d not booked %v after the fault ended; last answer %d %s", seat, faultPatience, resp.status, resp.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectSettled checks the data once a fault is over: no seat of schedule
// has two active reservations, no seat is held, and, within faultPatience
// (an orphaned lock lives at most its TTL), no seat lock key in rdb holds
// an owner's token.
func (h *harness) expectSettled(rdb redis.UniversalClient, schedule int64, seats int) {
	h.t.Helper()
	var doubles int
	err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM (
		SELECT seat_id FROM reservations WHERE schedule_id = $1 AND cancelled_at IS NULL
		GROUP BY seat_id HAVING count(*) > 1) d`, schedule).Scan(&doubles)
	if err != nil {
		h.t.Fatal(err)
	}
	if doubles != 0 {
		h.t.Errorf("%d seats booked twice", doubles)
	}
	for seat, status := range h.seatStatuses(schedule) {
		if status == "held" {
			h.t.Errorf("seat %d left held", seat)
		}
	}
	deadline := time.Now().Add(faultPatience)
	for {
		locked := lockedSeatsIn(h.t, rdb, schedule, seats)
		if len(locked) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("seats still locked %v after the fault: %v", faultPatience, locked)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockedSeatsIn lists the seats of schedule whose lock key in rdb holds an
// owner's token (a seal marks a booked seat and is no lock).
func lockedSeatsIn(t *testing.T, rdb redis.UniversalClient, schedule int64, seats int) []int {
	t.Helper()
	var locked []int
	for seat := 1; seat <= seats; seat++ {
		v, err := rdb.Get(context.Background(), reservation.SeatLockKey(schedule, seat)).Result()
		switch {
		case err == redis.Nil:
		case err != nil:
			t.Fatalf("read lock key of seat %d: %v", seat, err)
		case v != "sealed":
			locked = append(locked, seat)
		}
	}
	return locked
}

// logFault writes one fault's measured figures in the one format the
// README's failure table is collected from (go test -v -run Fault | grep fault=).
func logFault(t *testing.T, fault string, first503, recovery time.Duration) {
	t.Helper()
	ms := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return d.Round(time.Millisecond).String()
	}
	t.Logf("fault=%s first503=%s recovery=%s", fault, ms(first503), ms(recovery))
}
