package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/testenv"
)

// mapBookings knows one schedule of three free seats.
type mapBookings struct {
	fakeBookings
	id int64
}

func (b mapBookings) Schedule(_ context.Context, id int64) (reservation.Schedule, error) {
	if id != b.id {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	return reservation.RestoreSchedule(id, "Hamlet", time.Now(), 3), nil
}

func (b mapBookings) SeatMap(context.Context, int64) ([]reservation.Seat, error) {
	return []reservation.Seat{{ID: 1, Status: "available"}, {ID: 2, Status: "available"}, {ID: 3, Status: "available"}}, nil
}

// An idle stream gets a comment every heartbeat, and a stream that the
// server shuts down ends.
func TestStreamHeartbeatAndShutdown(t *testing.T) {
	t.Parallel()
	feed := seatfeed.New(testenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	schedule := rand.Int64N(1<<40) + 1
	shutdown := make(chan struct{})
	srv := httptest.NewServer(httpapi.NewHandler(httpapi.Options{
		Bookings: mapBookings{id: schedule}, Verifier: verifier, Feed: feed,
		StreamHeartbeat: 50 * time.Millisecond, Shutdown: shutdown,
	}))
	defer srv.Close()

	resp, err := http.Get(fmt.Sprintf("%s/schedules/%d/seats/events", srv.URL, schedule))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("stream answered %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	heartbeats := 0
	timeout := time.After(5 * time.Second)
	for heartbeats < 2 {
		select {
		case line := <-lines:
			seen = append(seen, line)
			if line == ": keep-alive" {
				heartbeats++
			}
		case <-timeout:
			t.Fatalf("no two heartbeats in 5 s; got %q", seen)
		}
	}
	if !strings.HasPrefix(seen[0], "retry: ") || !strings.Contains(strings.Join(seen, "\n"), "event: snapshot") {
		t.Errorf("stream began %q, want retry then a snapshot", seen)
	}

	close(shutdown)
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-lines:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the stream did not end when the server shut down")
		}
	}
}
