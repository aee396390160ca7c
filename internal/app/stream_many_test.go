package app_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// An instance whose streams watch more schedules than a Redis pool's
// default size (10 per CPU) delivers every one's changes within a second.
// (When each watched schedule's reader held a connection in a blocking
// read, with go-redis's default pool the readers past it waited for a
// connection and their streams stalled; one read now follows them all.)
func TestStreamsOfManySchedulesAllDeliver(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	n := 10*runtime.GOMAXPROCS(0) + 5
	schedules := make([]int64, n)
	streams := make([]*eventStream, n)
	for i := range schedules {
		schedules[i] = h.createSchedule(2)
		streams[i] = h.stream(0, schedules[i], "")
		defer streams[i].close()
		if ev := streams[i].next(10 * time.Second); ev.name != "snapshot" {
			t.Fatalf("stream %d: first event %+v, want the snapshot", i, ev)
		}
	}
	// The read of every watched stream waits (up to 2 s) before the
	// bookings.
	time.Sleep(500 * time.Millisecond)
	for i, s := range schedules {
		if got := h.reserve(0, fmt.Sprintf("user-%d", i), s, 1); got.status != 200 {
			t.Fatalf("reserve on schedule %d: %d %s", s, got.status, got.raw)
		}
	}
	// A followed stream's change arrives within milliseconds; one that
	// waited for a read to end, only after up to 2 s. A second is far
	// more than the first and less than the second.
	booked := time.Now()
	for i := range schedules {
		streams[i].seatEvent(1, "reserved", time.Until(booked.Add(time.Second)))
	}
}
