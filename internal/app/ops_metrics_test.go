package app_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
)

// scrape returns the text of GET url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// Requests are counted by route pattern and status, bookings by outcome,
// and the pools and streams are there for an operator to watch.
func TestMetricsForOperators(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 1, func(*config.Config) {}, app.WithoutJobs())
	schedule := h.createSchedule(2)
	// Two users: the owner's own retry would be answered 200.
	for _, user := range []string{"alice", "bob"} {
		h.postJSON("/reservations", h.token(user, ""), map[string]any{"scheduleId": schedule, "seatId": 1})
	}
	h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	h.do(request{method: http.MethodGet, path: "/no/such/path/42"})
	// Holds: one best available (seat 2), then one that finds none.
	for _, user := range []string{"carol", "dave"} {
		h.postJSON("/holds", h.token(user, ""), map[string]any{"scheduleId": schedule, "quantity": 1})
	}
	stream := h.stream(0, schedule, "")
	if ev := stream.next(5 * time.Second); ev.name != "snapshot" {
		t.Fatalf("first event %+v, want the snapshot", ev)
	}

	body := scrape(t, h.bases[0]+"/metrics")
	for _, want := range []string{
		`seatlock_http_request_duration_seconds_count{method="POST",route="/reservations",status="200"} 1`,
		`seatlock_http_request_duration_seconds_count{method="POST",route="/reservations",status="409"} 1`,
		`seatlock_http_request_duration_seconds_count{method="GET",route="/schedules/{id}/seats",status="200"} 1`,
		`seatlock_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"} 1`,
		`seatlock_booking_outcomes_total{outcome="booked"} 1`,
		`seatlock_booking_outcomes_total{outcome="seat_taken"} 1`,
		`seatlock_hold_outcomes_total{outcome="held"} 1`,
		`seatlock_hold_outcomes_total{outcome="not_enough_seats"} 1`,
		`seatlock_best_available_attempts_bucket{outcome="held",le="1"} 1`,
		`seatlock_best_available_attempts_count{outcome="held"} 1`,
		`seatlock_sse_streams_open 1`,
		`seatlock_pg_pool_max_conns `,
		`seatlock_pg_pool_acquires_total `,
		`seatlock_redis_pool_total_conns{pool="locks"} `,
		`seatlock_redis_pool_total_conns{pool="feed"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(body, "/no/such/path") {
		t.Error("/metrics names an unmatched path: probing clients could make a series each")
	}
}

// With METRICS_ADDR, metrics and profiles are served there and the public
// listener serves neither.
func TestMetricsAddrServesMetricsAndProfilesPrivately(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	private := ln.Addr().String()
	_ = ln.Close()
	h := newHarnessWith(t, 1, func(cfg *config.Config) { cfg.MetricsAddr = private })

	if got := h.do(request{method: http.MethodGet, path: "/metrics"}); got.status != http.StatusNotFound {
		t.Errorf("public GET /metrics: %d, want 404", got.status)
	}
	// The private listener starts with Serve, just after the public one.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.Dial("tcp", private)
		if err == nil {
			_ = conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on METRICS_ADDR %s", private)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if body := scrape(t, "http://"+private+"/metrics"); !strings.Contains(body, "seatlock_http_request_duration_seconds") {
		t.Error("private /metrics lacks the request metrics")
	}
	if body := scrape(t, "http://"+private+"/debug/pprof/goroutine?debug=1"); !strings.Contains(body, "goroutine") {
		t.Error("private listener serves no profiles")
	}
}
