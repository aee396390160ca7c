package reservation_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Requests that miss the cache for the same schedule at once share one
// query; later ones find it in memory. A schedule that was not found is
// asked again.
func TestScheduleLookupsAreShared(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	repo.before["Schedule"] = func() { time.Sleep(50 * time.Millisecond) }
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{}, nil)

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := svc.SeatMap(context.Background(), scheduleID); err != nil {
				t.Errorf("SeatMap: %v", err)
			}
		})
	}
	wg.Wait()
	if _, err := svc.SeatMap(context.Background(), scheduleID); err != nil {
		t.Fatal(err)
	}
	if n := len(repo.contexts("Schedule")); n != 1 {
		t.Errorf("Schedule queried %d times by 21 requests, want once", n)
	}

	for range 2 {
		if _, err := svc.SeatMap(context.Background(), scheduleID+1); !errors.Is(err, reservation.ErrScheduleNotFound) {
			t.Fatalf("unknown schedule: %v", err)
		}
	}
	if n := len(repo.contexts("Schedule")); n != 3 {
		t.Errorf("Schedule queried %d times, want 3: an unknown schedule is asked for each time", n)
	}
}

// A request that gives up stops waiting for a shared query, and the query
// is not cancelled for the others.
func TestSharedScheduleLookupOutlivesTheRequestThatStartedIt(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	release := make(chan struct{})
	repo.before["Schedule"] = func() { <-release }
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{}, nil)

	first, cancel := context.WithCancel(context.Background())
	firstDone := make(chan error, 1)
	go func() { _, err := svc.SeatMap(first, scheduleID); firstDone <- err }()
	time.Sleep(20 * time.Millisecond) // the first request starts the query
	secondDone := make(chan error, 1)
	go func() { _, err := svc.SeatMap(context.Background(), scheduleID); secondDone <- err }()
	cancel()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the request that gave up: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-secondDone; err != nil {
		t.Errorf("the request that waited: %v, want the seat map", err)
	}
}

// The booking and the hold use cases read a schedule once between them.
func TestOneScheduleCacheServesBookingsAndHolds(t *testing.T) {
	t.Parallel()
	holds := &fakeHoldRepo{}
	svc := reservation.NewService(holds, &fakeMultiLocker{}, reservation.Config{}, nil)

	if _, err := svc.Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1}, UserID: "alice"}); err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if _, err := svc.Schedule(context.Background(), scheduleID); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	if holds.scheduleReads != 1 {
		t.Errorf("schedule read %d times by a hold and a booking's look-up, want once", holds.scheduleReads)
	}
}
