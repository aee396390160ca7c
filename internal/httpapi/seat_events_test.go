package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// mapBookings knows one schedule of three seats.
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

// countedSeats lists no occupied seat, and counts the listings.
type countedSeats struct{ reads *atomic.Int64 }

func (c countedSeats) OccupiedSeats(context.Context, int64) ([]reservation.OccupiedSeat, error) {
	c.reads.Add(1)
	return nil, nil
}

// An idle stream gets a comment every heartbeat, and a stream that the
// server shuts down ends.
func TestStreamHeartbeatAndShutdown(t *testing.T) {
	t.Parallel()
	feed := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	schedule := rand.Int64N(1<<40) + 1
	shutdown := make(chan struct{})
	srv := httptest.NewServer(httpapi.NewHandler(httpapi.Options{
		Bookings: mapBookings{id: schedule}, SeatImages: seatmap.NewImages(nil, countedSeats{&atomic.Int64{}}, seatmap.Config{}), Verifier: verifier, Feed: feed,
		StreamHeartbeat: 50 * time.Millisecond, Shutdown: shutdown,
	}))
	defer srv.Close()

	resp, err := http.Get(fmt.Sprintf("%s/schedules/%d/seats/events", srv.URL, schedule))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
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

// Streams share their schedule's image, and its rendering: a crowd of
// reconnecting browsers costs one listing of the seats, and a change
// reaches the next snapshot by the feed, not by listing them again.
func TestStreamsShareASnapshot(t *testing.T) {
	t.Parallel()
	feed := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	schedule := rand.Int64N(1<<40) + 1
	reads := &atomic.Int64{}
	images := seatmap.NewImages(feed, countedSeats{reads}, seatmap.Config{})
	t.Cleanup(images.Close)
	srv := httptest.NewServer(httpapi.NewHandler(httpapi.Options{
		Bookings: mapBookings{id: schedule}, SeatImages: images, Verifier: verifier, Feed: feed,
	}))
	defer srv.Close()
	snapshot := func() string {
		resp, err := http.Get(fmt.Sprintf("%s/schedules/%d/seats/events", srv.URL, schedule))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				return sc.Text()
			}
		}
		t.Fatal("no snapshot")
		return ""
	}
	first, second := snapshot(), snapshot()
	if first != second || reads.Load() != 1 {
		t.Errorf("two streams listed the seats %d times (snapshots equal: %v), want once", reads.Load(), first == second)
	}
	if err := feed.SeatsChanged(context.Background(), schedule, []reservation.Seat{{ID: 1, Status: "held"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(snapshot(), `"seatId":1,"status":"held"`) {
		if time.Now().After(deadline) {
			t.Fatal("the change never reached a snapshot")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if reads.Load() != 1 {
		t.Errorf("after a change, %d listings of the seats, want still 1", reads.Load())
	}
}
