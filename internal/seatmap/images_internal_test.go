package seatmap

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
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
// them in one round trip, and only about those that took in events since
// their last check: an instance that keeps thousands of seat maps makes
// one call a second for the active ones, and none for the idle ones.
func TestImagesAreCheckedTogether(t *testing.T) {
	t.Parallel()
	rdb := lockenv.Redis(t)
	calls := &xinfoCalls{}
	rdb.AddHook(calls)
	feed := seatfeed.New(rdb, seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	images := NewImages(feed, &listedSeats{}, Config{})
	t.Cleanup(images.Close)
	ctx := context.Background()
	first := rand.Int64N(1<<40) + 1
	const kept = 40
	list := make([]*Image, kept)
	for i := range list {
		image, err := images.Image(ctx, reservation.RestoreSchedule(first+int64(i), "Final", time.Now(), 5))
		if err != nil {
			t.Fatal(err)
		}
		list[i] = image
	}
	rounds := func() int {
		images.mu.Lock()
		defer images.mu.Unlock()
		return images.rounds
	}
	leastChecks := func() int {
		images.mu.Lock()
		defer images.mu.Unlock()
		return leastChecksOf(images)
	}
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not in 15 s", what)
			}
		}
	}

	// Idle: two rounds, no call.
	calls.reset()
	since := rounds()
	waitFor("two rounds", func() bool { return rounds() >= since+2 })
	if alone, batches := calls.taken(); alone != 0 || len(batches) != 0 {
		t.Errorf("idle images: %d calls alone, round trips %v; want none", alone, batches)
	}

	// An event for every image, taken in while the rounds wait (they
	// take images.mu): the next round checks all of them at once.
	images.mu.Lock()
	for i := range list {
		if err := feed.SeatsChanged(ctx, first+int64(i), []reservation.Seat{{ID: 1, Status: "held"}}); err != nil {
			images.mu.Unlock()
			t.Fatal(err)
		}
	}
	for i, image := range list {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if v, _ := image.Tag(); v == 1 {
				break
			}
			if time.Now().After(deadline) {
				images.mu.Unlock()
				t.Fatalf("image %d never took in its event", i)
			}
		}
	}
	calls.reset()
	checks := leastChecksOf(images)
	images.mu.Unlock()
	waitFor("a check of every image", func() bool { return leastChecks() > checks })
	since = rounds()
	waitFor("two more rounds", func() bool { return rounds() >= since+2 })
	if alone, batches := calls.taken(); alone != 0 || !slices.Equal(batches, []int{kept}) {
		t.Errorf("%d images with an event each: %d calls alone, round trips of %v streams; want none alone, one of %d (and none once checked)",
			kept, alone, batches, kept)
	}
}

// leastChecksOf is the fewest checks any of the kept images had;
// images.mu is held.
func leastChecksOf(images *Images) int {
	least := -1
	for _, e := range images.kept {
		e.mu.Lock()
		if least < 0 || e.checks < least {
			least = e.checks
		}
		e.mu.Unlock()
	}
	return least
}

// xinfoCalls counts the XINFO commands a client sends: alone, and in each
// pipeline.
type xinfoCalls struct {
	mu      sync.Mutex
	alone   int
	batches []int
}

func (c *xinfoCalls) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alone, c.batches = 0, nil
}

func (c *xinfoCalls) taken() (alone int, batches []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alone, append([]int(nil), c.batches...)
}

func isXInfo(cmd redis.Cmder) bool { return strings.EqualFold(cmd.Name(), "xinfo") }

func (c *xinfoCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *xinfoCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isXInfo(cmd) {
			c.mu.Lock()
			c.alone++
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (c *xinfoCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, cmd := range cmds {
			if isXInfo(cmd) {
				n++
			}
		}
		if n > 0 {
			c.mu.Lock()
			c.batches = append(c.batches, n)
			c.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}
