package seatmap

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// changingSeats lists whatever seats it was last given, each listing
// taking delay.
type changingSeats struct {
	mu    sync.Mutex
	seats []reservation.OccupiedSeat
	delay time.Duration
}

func (c *changingSeats) set(seats ...reservation.OccupiedSeat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seats = seats
}

func (c *changingSeats) OccupiedSeats(context.Context, int64) ([]reservation.OccupiedSeat, error) {
	c.mu.Lock()
	seats, delay := append([]reservation.OccupiedSeat(nil), c.seats...), c.delay
	c.mu.Unlock()
	time.Sleep(delay)
	return seats, nil
}

func reservedSeats(t *testing.T, image *Image) []int {
	t.Helper()
	var seats []int
	for i, code := range image.State().Status {
		if code == CodeReserved {
			seats = append(seats, i+1)
		}
	}
	return seats
}

// An image nobody read for longer than pollingMaxStale is listed again
// before it is answered: serving it while a listing runs would show a
// seat map as old as the last time anyone asked, seconds or hours.
func TestPolledImageLongUnreadIsListedBeforeItIsServed(t *testing.T) {
	ctx := context.Background()
	seats := &changingSeats{}
	seats.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved})
	images := newPolling(seats)
	schedule := reservation.RestoreSchedule(9, "hall", time.Now().Add(time.Hour), 10)
	first, err := images.image(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedSeats(t, first); len(got) != 1 || got[0] != 1 {
		t.Fatalf("first listing shows %v reserved, want [1]", got)
	}

	seats.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved}, reservation.OccupiedSeat{ID: 2, Status: reservation.SeatReserved}, reservation.OccupiedSeat{ID: 3, Status: reservation.SeatReserved})
	seats.mu.Lock()
	seats.delay = 300 * time.Millisecond // an answer that did not wait for the listing shows the old state
	seats.mu.Unlock()
	time.Sleep(pollingMaxStale + 100*time.Millisecond)
	later, err := images.image(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedSeats(t, later); len(got) != 3 {
		t.Fatalf("read %s after the last: shows %v reserved, want [1 2 3]", pollingMaxStale+100*time.Millisecond, got)
	}
}

// An image read again within pollingMaxStale is answered at once, and
// listed again behind the answer: the next read shows the change.
func TestPolledImageRecentlyReadIsServedWhileListedAgain(t *testing.T) {
	ctx := context.Background()
	seats := &changingSeats{}
	images := newPolling(seats)
	schedule := reservation.RestoreSchedule(9, "hall", time.Now().Add(time.Hour), 10)
	if _, err := images.image(ctx, schedule); err != nil {
		t.Fatal(err)
	}
	seats.set(reservation.OccupiedSeat{ID: 4, Status: reservation.SeatReserved})
	seats.mu.Lock()
	seats.delay = time.Second
	seats.mu.Unlock()
	time.Sleep(pollingMaxAge + 50*time.Millisecond)
	began := time.Now()
	image, err := images.image(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited >= time.Second {
		t.Fatalf("the answer waited %s for the listing", waited)
	}
	if got := reservedSeats(t, image); len(got) != 0 {
		t.Fatalf("answered at once, yet shows %v reserved: the listing cannot have ended", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(reservedSeats(t, image)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listing behind the answer never showed seat 4")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A polled listing that holds a change this instance expected ends the
// expectation: the next listing's status for the seat shows, not the
// expected one over it until it expires.
func TestPolledImageShowsTheListingAfterAnExpectedChange(t *testing.T) {
	schedule, err := reservation.NewSchedule("Hamlet", time.Now().Add(time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	image := NewImage(schedule)
	image.Expect([]int{2}, reservation.SeatHeld)
	image.replace([]reservation.OccupiedSeat{{ID: 2, Status: reservation.SeatHeld}}, "a")
	image.replace([]reservation.OccupiedSeat{{ID: 2, Status: reservation.SeatReserved}}, "b")
	if got := reservedSeats(t, image); len(got) != 1 || got[0] != 2 {
		t.Errorf("reserved seats %v after the listing that has seat 2 reserved, want [2]", got)
	}
}
