package seatmap

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// listedSeats is a store whose occupied seats the test sets.
type listedSeats struct {
	mu    sync.Mutex
	seats []reservation.OccupiedSeat
	reads int
}

func (l *listedSeats) OccupiedSeats(context.Context, int64) ([]reservation.OccupiedSeat, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	return append([]reservation.OccupiedSeat(nil), l.seats...), nil
}

func (l *listedSeats) set(seats ...reservation.OccupiedSeat) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seats = seats
}

func statusOf(t *testing.T, image *Image, seat int) reservation.SeatStatus {
	t.Helper()
	return StatusOf(image.State().Status[seat-1])
}

// An image takes in the seat events after the position it was listed at,
// counting each as a version; when its events stop short (its
// subscription fell behind and was ended), the next request lists the
// seats again, and changes the events never carried show.
func TestImageFollowsTheFeedAndReloadsAfterAGap(t *testing.T) {
	t.Parallel()
	feed := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	store := &listedSeats{}
	store.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved})
	images := NewImages(feed, store, Config{Buffer: 1})
	t.Cleanup(images.Close)
	ctx := context.Background()
	id := rand.Int64N(1<<40) + 1
	// Two changes before the image: its version starts at their count.
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 1, Status: "held"}, {ID: 1, Status: "reserved"}}); err != nil {
		t.Fatal(err)
	}
	schedule := reservation.RestoreSchedule(id, "Final", time.Now(), 5)
	image, err := images.Image(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := image.Tag(); v != 2 || statusOf(t, image, 1) != reservation.SeatReserved {
		t.Fatalf("image at version %d, seat 1 %s; want 2, reserved", v, statusOf(t, image, 1))
	}
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 3, Status: "held"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for statusOf(t, image, 3) != reservation.SeatHeld {
		if time.Now().After(deadline) {
			t.Fatal("the image never took in the change")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v, _ := image.Tag(); v != 3 || store.reads != 1 {
		t.Errorf("after one change: version %d, %d listings; want 3, 1", v, store.reads)
	}

	// A change the events never carry, then a gap: the image, held here,
	// takes in no events, and the hub ends its subscription once more
	// batches wait than its buffer of one holds.
	store.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved}, reservation.OccupiedSeat{ID: 3, Status: reservation.SeatHeld}, reservation.OccupiedSeat{ID: 5, Status: reservation.SeatReserved})
	images.mu.Lock()
	sub := images.kept[id].sub
	images.mu.Unlock()
	lag := func() error {
		image.mu.Lock()
		defer image.mu.Unlock()
		for deadline := time.Now().Add(5 * time.Second); !sub.Lagged(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				return errors.New("the image's subscription never fell behind")
			}
			if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 2, Status: "held"}}); err != nil {
				return err
			}
		}
		return nil
	}
	if err := lag(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		again, err := images.Image(ctx, schedule)
		if err != nil {
			t.Fatal(err)
		}
		if again != image {
			t.Fatal("the image was remade, not reloaded in place: readers would keep a dead one")
		}
		if statusOf(t, image, 5) == reservation.SeatReserved {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the gap, the image never showed the change the events missed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if store.reads != 2 {
		t.Errorf("%d listings, want 2: one at first, one after the gap", store.reads)
	}
}

// An image whose count of events differs from its stream's at the same
// last entry (here an entry it could not read; in a Redis failover,
// entries it read from the old master that the new one never had) is
// loaded again by a request after the next check.
func TestImageWhoseCountDiffersIsLoadedAgain(t *testing.T) {
	t.Parallel()
	rdb := lockenv.Redis(t)
	feed := seatfeed.New(rdb, seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	store := &listedSeats{}
	images := NewImages(feed, store, Config{})
	t.Cleanup(images.Close)
	ctx := context.Background()
	id := rand.Int64N(1<<40) + 1
	schedule := reservation.RestoreSchedule(id, "Final", time.Now(), 5)
	image, err := images.Image(ctx, schedule)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: seatfeed.StreamKey(id), Values: []any{"seat", "x", "status", "bogus"}}).Err(); err != nil {
		t.Fatal(err)
	}
	store.set(reservation.OccupiedSeat{ID: 4, Status: reservation.SeatReserved}) // a change only a load shows
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 2, Status: "held"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for statusOf(t, image, 4) != reservation.SeatReserved {
		if time.Now().After(deadline) {
			v, _ := image.Tag()
			t.Fatalf("the image (version %d) was never loaded again", v)
		}
		if _, err := images.Image(ctx, schedule); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, _ := image.Tag(); v != 2 || statusOf(t, image, 2) != reservation.SeatAvailable {
		// Loaded from the store, which lists seat 4 only, at the stream's count.
		t.Errorf("after the load: version %d, seat 2 %s; want 2, available (the store's word)", v, statusOf(t, image, 2))
	}
}

// The once-a-second check of the kept images asks Redis about all of
// them at once: an instance that keeps many seat maps does not open a
// connection for each of them every second.
func TestImagesAreCheckedTogether(t *testing.T) {
	t.Parallel()
	rdb := lockenv.Redis(t)
	feed := seatfeed.New(rdb, seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	images := NewImages(feed, &listedSeats{}, Config{})
	t.Cleanup(images.Close)
	ctx := context.Background()
	first := rand.Int64N(1<<40) + 1
	const kept = 40
	for i := range int64(kept) {
		if _, err := images.Image(ctx, reservation.RestoreSchedule(first+i, "Final", time.Now(), 5)); err != nil {
			t.Fatal(err)
		}
	}
	checked := func() (n int) {
		images.mu.Lock()
		defer images.mu.Unlock()
		for _, e := range images.kept {
			e.mu.Lock()
			if e.checks > 0 {
				n++
			}
			e.mu.Unlock()
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for checked() < kept {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d images checked in 10 s", checked(), kept)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// One connection reads the streams, a few served the loads.
	if conns := rdb.PoolStats().TotalConns; conns > 4 {
		t.Errorf("%d kept images checked through %d connections; want one round trip for all", kept, conns)
	}
}
