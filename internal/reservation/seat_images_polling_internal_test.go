package reservation

import (
	"context"
	"sync"
	"testing"
	"time"
)

// changingSeats lists whatever seats it was last given, each listing
// taking delay.
type changingSeats struct {
	mu    sync.Mutex
	seats []OccupiedSeat
	delay time.Duration
}

func (c *changingSeats) set(seats ...OccupiedSeat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seats = seats
}

func (c *changingSeats) OccupiedSeats(context.Context, int64) ([]OccupiedSeat, error) {
	c.mu.Lock()
	seats, delay := append([]OccupiedSeat(nil), c.seats...), c.delay
	c.mu.Unlock()
	time.Sleep(delay)
	return seats, nil
}

func reservedSeats(t *testing.T, image *SeatImage) []int {
	t.Helper()
	var seats []int
	for i, code := range image.State().Status {
		if code == SeatReserved.Code() {
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
	seats.set(OccupiedSeat{ID: 1, Status: SeatReserved})
	images := NewPollingSeatImages(seats)
	schedule := RestoreSchedule(9, "hall", time.Now().Add(time.Hour), 10)
	first, err := images.SeatImage(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if got := reservedSeats(t, first); len(got) != 1 || got[0] != 1 {
		t.Fatalf("first listing shows %v reserved, want [1]", got)
	}

	seats.set(OccupiedSeat{ID: 1, Status: SeatReserved}, OccupiedSeat{ID: 2, Status: SeatReserved}, OccupiedSeat{ID: 3, Status: SeatReserved})
	seats.mu.Lock()
	seats.delay = 300 * time.Millisecond // an answer that did not wait for the listing shows the old state
	seats.mu.Unlock()
	time.Sleep(pollingMaxStale + 100*time.Millisecond)
	later, err := images.SeatImage(ctx, schedule)
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
	images := NewPollingSeatImages(seats)
	schedule := RestoreSchedule(9, "hall", time.Now().Add(time.Hour), 10)
	if _, err := images.SeatImage(ctx, schedule); err != nil {
		t.Fatal(err)
	}
	seats.set(OccupiedSeat{ID: 4, Status: SeatReserved})
	seats.mu.Lock()
	seats.delay = time.Second
	seats.mu.Unlock()
	time.Sleep(pollingMaxAge + 50*time.Millisecond)
	began := time.Now()
	image, err := images.SeatImage(ctx, schedule)
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
	schedule, err := NewSchedule("Hamlet", time.Now().Add(time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	image := NewSeatImage(schedule)
	image.Expect([]int{2}, SeatHeld)
	image.replace([]OccupiedSeat{{ID: 2, Status: SeatHeld}}, "a")
	image.replace([]OccupiedSeat{{ID: 2, Status: SeatReserved}}, "b")
	if got := reservedSeats(t, image); len(got) != 1 || got[0] != 2 {
		t.Errorf("reserved seats %v after the listing that has seat 2 reserved, want [2]", got)
	}
}
