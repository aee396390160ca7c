package seatmap

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// boundedImages returns images on a feed of their own, bounded to
// maxBytes, and schedules of 100 seats of this test alone.
func boundedImages(t *testing.T, store Source, maxBytes int64, schedules int) (*seatfeed.Feed, *Images, []reservation.Schedule) {
	t.Helper()
	feed := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	images := NewImages(feed, store, Config{MaxBytes: maxBytes})
	t.Cleanup(images.Close)
	first := rand.Int64N(1<<40) + 1
	list := make([]reservation.Schedule, schedules)
	for i := range list {
		list[i] = reservation.RestoreSchedule(first+int64(i), "Final", time.Now(), 100)
	}
	return feed, images, list
}

func load(t *testing.T, images *Images, schedule reservation.Schedule) *Image {
	t.Helper()
	image, err := images.Image(context.Background(), schedule)
	if err != nil {
		t.Fatal(err)
	}
	return image
}

// watch opens a live seat-map stream's subscription to schedule.
func watch(t *testing.T, feed *seatfeed.Feed, schedule reservation.Schedule) {
	t.Helper()
	sub, err := feed.Subscribe(context.Background(), schedule.ID(), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
}

// keptOf returns which of schedules have a kept image, and what the kept
// images weigh.
func keptOf(images *Images, schedules ...reservation.Schedule) (kept []int, bytes int64) {
	images.mu.Lock()
	defer images.mu.Unlock()
	for i, s := range schedules {
		if images.kept[s.ID()] != nil {
			kept = append(kept, i)
		}
	}
	return kept, images.keptBytes
}

func subscriptionOf(images *Images, schedule reservation.Schedule) *seatfeed.Subscription {
	images.mu.Lock()
	defer images.mu.Unlock()
	return images.kept[schedule.ID()].sub
}

func ended(sub *seatfeed.Subscription) bool {
	select {
	case _, open := <-sub.C:
		return !open
	default:
		return false
	}
}

// Past the bound, the least recently read images go, the unwatched ones
// first: a watched image stays however old, and a dropped one's
// subscription ends with it.
func TestImagesPastTheBoundDropTheLeastRecentlyReadUnwatchedFirst(t *testing.T) {
	t.Parallel()
	w := weigh(reservation.RestoreSchedule(1, "Final", time.Now(), 100))
	feed, images, s := boundedImages(t, &listedSeats{}, 3*w, 5)
	load(t, images, s[0])
	load(t, images, s[1])
	load(t, images, s[2])
	watch(t, feed, s[0])
	second := subscriptionOf(images, s[1])

	load(t, images, s[3])
	if kept, bytes := keptOf(images, s...); !slices.Equal(kept, []int{0, 2, 3}) || bytes != 3*w {
		t.Errorf("after a fourth image: kept %v weighing %d; want [0 2 3] (the oldest unwatched dropped) weighing %d", kept, bytes, 3*w)
	}
	if !ended(second) {
		t.Error("the dropped image's subscription did not end")
	}
	load(t, images, s[4])
	if kept, _ := keptOf(images, s...); !slices.Equal(kept, []int{0, 3, 4}) {
		t.Errorf("after a fifth image: kept %v; want [0 3 4]: the watched one stays, the oldest unwatched goes", kept)
	}
}

// When the watched images alone weigh more than the bound, they go too,
// the least recently read first; the image just loaded always stays, even
// alone over the bound.
func TestWatchedImagesPastTheBoundGoLeastRecentlyReadFirst(t *testing.T) {
	t.Parallel()
	w := weigh(reservation.RestoreSchedule(1, "Final", time.Now(), 100))
	feed, images, s := boundedImages(t, &listedSeats{}, w+w/2, 3)
	for _, schedule := range s {
		watch(t, feed, schedule)
	}
	load(t, images, s[0])
	load(t, images, s[1])
	if kept, _ := keptOf(images, s...); !slices.Equal(kept, []int{1}) {
		t.Errorf("two watched images over a bound of one and a half: kept %v; want [1]", kept)
	}
	load(t, images, s[0])
	if kept, bytes := keptOf(images, s...); !slices.Equal(kept, []int{0}) || bytes != w {
		t.Errorf("the first read again: kept %v weighing %d; want [0] weighing %d", kept, bytes, w)
	}

	_, alone, big := boundedImages(t, &listedSeats{}, w/2, 1)
	load(t, alone, big[0])
	if kept, _ := keptOf(alone, big...); !slices.Equal(kept, []int{0}) {
		t.Errorf("one image over the bound on its own: kept %v; want [0]", kept)
	}
}

// An image dropped past the bound is loaded again by its next read: it
// shows the seats as they are then, counts the stream's events, and takes
// in the events after it.
func TestImageDroppedPastTheBoundIsLoadedAgainAndFollows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := weigh(reservation.RestoreSchedule(1, "Final", time.Now(), 100))
	store := &listedSeats{}
	feed, images, s := boundedImages(t, store, w, 2)
	id := s[0].ID()
	store.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved})
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 1, Status: "reserved"}}); err != nil {
		t.Fatal(err)
	}
	before := load(t, images, s[0])
	load(t, images, s[1])
	if kept, _ := keptOf(images, s...); !slices.Equal(kept, []int{1}) {
		t.Fatalf("kept %v; want [1]: the first image dropped", kept)
	}
	// Changes while no image is kept: the next load lists them.
	store.set(reservation.OccupiedSeat{ID: 1, Status: reservation.SeatReserved}, reservation.OccupiedSeat{ID: 2, Status: reservation.SeatHeld})
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 2, Status: "held"}}); err != nil {
		t.Fatal(err)
	}
	reads := store.reads
	image := load(t, images, s[0])
	if image == before || store.reads != reads+1 {
		t.Fatalf("the read after the drop: same image %v, %d listings; want a new image, one listing", image == before, store.reads-reads)
	}
	if v, _ := image.Tag(); v != 2 || statusOf(t, image, 1) != reservation.SeatReserved || statusOf(t, image, 2) != reservation.SeatHeld {
		t.Errorf("loaded again: version %d, seats 1 %s, 2 %s; want 2, reserved, held", v, statusOf(t, image, 1), statusOf(t, image, 2))
	}
	if err := feed.SeatsChanged(ctx, id, []reservation.Seat{{ID: 3, Status: "reserved"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for statusOf(t, image, 3) != reservation.SeatReserved {
		if time.Now().After(deadline) {
			t.Fatal("the image loaded again never took in the event after its load")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v, _ := image.Tag(); v != 3 {
		t.Errorf("after one more event: version %d, want 3", v)
	}
}

// An image nobody read in Idle is dropped, unless a live seat-map stream
// watches its schedule.
func TestIdleImagesAreDroppedUnlessWatched(t *testing.T) {
	t.Parallel()
	feed := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: 100 * time.Millisecond})
	t.Cleanup(feed.Close)
	images := NewImages(feed, &listedSeats{}, Config{Idle: time.Nanosecond})
	t.Cleanup(images.Close)
	first := rand.Int64N(1<<40) + 1
	s := []reservation.Schedule{reservation.RestoreSchedule(first, "Final", time.Now(), 10), reservation.RestoreSchedule(first+1, "Final", time.Now(), 10)}
	watch(t, feed, s[0])
	load(t, images, s[0])
	load(t, images, s[1])
	deadline := time.Now().Add(10 * time.Second)
	for {
		kept, bytes := keptOf(images, s...)
		if slices.Equal(kept, []int{0}) {
			if want := weigh(s[0]); bytes != want {
				t.Errorf("the watched image alone weighs %d; want %d", bytes, want)
			}
			return
		}
		if len(kept) < 1 || kept[0] != 0 {
			t.Fatalf("kept %v: the watched image was dropped", kept)
		}
		if time.Now().After(deadline) {
			t.Fatalf("kept %v after 10 s; want the idle unwatched image dropped", kept)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
