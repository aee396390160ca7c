package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/reservation"
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
func proxiedURL(t *testing.T, rawURL string) (string, *lockenv.Proxy) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := lockenv.NewProxy(t, u.Host)
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

// faultyHarness is a harness with one instance, made with opts, whose
// Redis and PostgreSQL connections both go through fault proxies.
func faultyHarness(t *testing.T, opts ...app.Option) (h *harness, redisProxy, pgProxy *lockenv.Proxy) {
	t.Helper()
	h = newHarnessWith(t, 0, faultTuning, opts...)
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

// expectRetryAgrees retries, as a client honouring Retry-After does, a
// booking answered 503 at answeredAt. A 503 is an unknown outcome: where
// the request reached PostgreSQL and only the reply was lost, the booking
// may have committed. The retry says which (200, or 409 seat_taken), and
// agrees with the rows.
func (h *harness) expectRetryAgrees(unavailable response, answeredAt time.Time, user string, schedule int64, seat int) {
	h.t.Helper()
	retryAfter, err := strconv.Atoi(unavailable.header.Get("Retry-After"))
	if err != nil {
		h.t.Fatalf("Retry-After %q: %v", unavailable.header.Get("Retry-After"), err)
	}
	time.Sleep(time.Until(answeredAt.Add(time.Duration(retryAfter) * time.Second)))
	retry := h.reserve(0, user, schedule, seat)
	rows := h.activeRows(schedule, seat)
	switch {
	case retry.status == http.StatusOK && rows == 1:
	case retry.status == http.StatusConflict && retry.code() == "seat_taken" && rows == 1:
		h.t.Logf("the booking answered 503 had committed (its reply was lost): the retry is answered seat_taken")
	default:
		h.t.Errorf("retry of seat %d after Retry-After: %d %s with %d active rows", seat, retry.status, retry.raw, rows)
	}
}

// expectSettled checks the data once a fault is over: no seat of schedule
// has two active reservations, no seat is held, and, within faultPatience
// (an orphaned lock lives at most its TTL), no seat lock key in rdb holds
// an owner's token. It returns how long the last lock took to go.
func (h *harness) expectSettled(rdb redis.UniversalClient, schedule int64, seats int) time.Duration {
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
	start := time.Now()
	deadline := start.Add(faultPatience)
	for {
		locked := lockedSeatsIn(h.t, rdb, schedule, seats)
		if len(locked) == 0 {
			return time.Since(start)
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
		case !redislock.IsSeal(v):
			locked = append(locked, seat)
		}
	}
	return locked
}

// logFault writes one fault's measured figures in the one format the
// failure table of docs/operations.md is collected from (go test -v -run Fault | grep fault=).
//
// first503 is how long the request meeting the fault took to be answered
// 503 (negative: none was), recovery how long after the fault ended the
// same instance booked again, unlocked how long after the fault ended the
// last lock key of the affected seats was gone (for a failover, how long
// after the last request to the instances was answered).
func logFault(t *testing.T, fault string, first503, recovery, unlocked time.Duration) {
	t.Helper()
	ms := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return d.Round(time.Millisecond).String()
	}
	t.Logf("fault=%s first503=%s recovery=%s unlocked=%s", fault, ms(first503), ms(recovery), ms(unlocked))
}

// sendRaw sends one request to instance base as the bearer of token, with
// the given extra headers, and returns the status (0 when no answer came:
// the error's text is then the code), the problem's code and the decoded
// body. Unlike h.do it never fails the test, so that the streams of
// requests of the fault tests can call it from their goroutines.
func (h *harness) sendRaw(base int, method, path, token, body string, header map[string]string) (int, string, map[string]any) {
	req, err := http.NewRequest(method, h.bases[base]+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, value := range header {
		req.Header.Set(name, value)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	code, _ := out["code"].(string)
	return resp.StatusCode, code, out
}
