package seatfeed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// A subscription that follows a schedule inside the process (a seat
// image) receives its changes as a watcher's does, but is no watcher:
// Watchers counts the watchers' subscriptions alone, and forgets a
// schedule when they close.
func TestFollowersReceiveChangesButAreNoWatchers(t *testing.T) {
	t.Parallel()
	f, schedule := newFeed(t, seatfeed.Config{})
	ctx := context.Background()
	follower, err := f.Follow(ctx, schedule, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer follower.Close()
	other := schedule + 1
	if got := f.Watchers([]int64{schedule, other}); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("with a follower alone: watchers %v, want [0 0]", got)
	}
	first, err := f.Subscribe(ctx, schedule, 16)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.Subscribe(ctx, schedule, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if got := f.Watchers([]int64{schedule, other}); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("with two watchers and a follower: watchers %v, want [2 0]", got)
	}
	publish(t, f, schedule, reservation.SeatHeld, 7)
	if got := receive(t, follower, 1); got[0].SeatID != 7 {
		t.Errorf("the follower received seat %d, want 7", got[0].SeatID)
	}
	if got := receive(t, first, 1); got[0].SeatID != 7 {
		t.Errorf("a watcher received seat %d, want 7", got[0].SeatID)
	}
	first.Close()
	first.Close() // a second close changes nothing
	if got := f.Watchers([]int64{schedule}); !slices.Equal(got, []int{1}) {
		t.Errorf("after a watcher closed: watchers %v, want [1]", got)
	}
}
