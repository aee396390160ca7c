package app_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
)

// serveByHand starts one instance whose shutdown the test controls: cancel
// is SIGTERM as main sees it, done gets Serve's result. It returns the
// instance's address.
func (h *harness) serveByHand() (addr string, cancel context.CancelFunc, done <-chan error) {
	h.t.Helper()
	a, err := app.New(context.Background(), h.cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(a.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.t.Fatal(err)
	}
	h.bases = []string{"http://" + ln.Addr().String()}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, ln) }()
	return ln.Addr().String(), cancel, served
}

// A request that is still arriving when shutdown begins is served to the
// end, and Serve then returns nil.
func TestShutdownDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	addr, cancel, done := h.serveByHand()
	schedule := h.createSchedule(1)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	body := fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)
	half := len(body) / 2
	_, _ = fmt.Fprintf(conn, "POST /reservations HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", h.token("alice", ""), len(body), body[:half])
	time.Sleep(100 * time.Millisecond) // let the server start reading the body

	cancel() // SIGTERM, as main sees it
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v while a request was in flight", err)
	default:
	}
	// New connections are refused first, while the request drains.
	if late, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = late.Close()
		t.Error("a new connection was accepted after shutdown began")
	}
	if _, err := fmt.Fprint(conn, body[half:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight response lost: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("in-flight request: status %d, want 200", resp.StatusCode)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after drain: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the last request finished")
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("rows = %d, want 1", n)
	}
}

// Open seat-map streams end when shutdown begins, so that they do not hold
// it up; Serve then returns nil at once.
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 0)
	_, cancel, done := h.serveByHand()
	schedule := h.createSchedule(1)
	streams := []*eventStream{h.stream(0, schedule, ""), h.stream(0, schedule, "")}
	for _, s := range streams {
		s.next(5 * time.Second)
	}

	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v, want a clean shutdown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown waited more than 5 s for the open streams")
	}
	for i, s := range streams {
		select {
		case _, open := <-s.events:
			for open {
				_, open = <-s.events
			}
		case <-time.After(5 * time.Second):
			t.Errorf("stream %d still open after shutdown", i)
		}
	}
	t.Logf("shutdown with 2 open streams took %s", time.Since(start))
}
