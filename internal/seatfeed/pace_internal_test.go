package seatfeed

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// The reads are spaced by the watchers alone: an instance that keeps
// thousands of seat images (followers) still reads every Interval.
func TestFollowersDoNotSpaceTheReads(t *testing.T) {
	t.Parallel()
	f := New(lockenv.Redis(t), Config{Interval: 10 * time.Millisecond, MaxDeliveries: 20, Block: 200 * time.Millisecond})
	t.Cleanup(f.Close)
	ctx := context.Background()
	schedule := rand.Int64N(1 << 40)
	for range 2 {
		sub, err := f.Follow(ctx, schedule, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
	}
	if got := f.interval(); got != 10*time.Millisecond {
		t.Errorf("with two followers: reads %v apart, want the Interval, 10ms", got)
	}
	for range 2 {
		sub, err := f.Subscribe(ctx, schedule, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
	}
	// Two watchers at 20 deliveries a second: a read every 100 ms.
	if got := f.interval(); got != 100*time.Millisecond {
		t.Errorf("with two watchers: reads %v apart, want 100ms", got)
	}
}
