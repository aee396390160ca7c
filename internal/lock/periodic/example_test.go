package periodic_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/lock/periodic"
)

// Two instances share a lock store (Redis in production: redislock.New).
// Whichever ticks first runs the job; the other skips it, and keeps skipping
// until LockAtLeastFor has passed since the run began.
func Example() {
	store := memlock.New()
	job := periodic.Job{
		Name:           "purge-expired-holds",
		Every:          time.Minute,      // at each full minute, on every instance
		LockAtMostFor:  10 * time.Minute, // a crashed holder blocks the job this long at most
		LockAtLeastFor: 50 * time.Second, // covers clock skew between instances
		Run: func(ctx context.Context) error {
			// Pass periodic.LeaseFrom(ctx).Fence() to the system of record.
			return nil
		},
	}
	a, _ := periodic.New(lock.New(store, lock.Config{}), periodic.Config{}, job)
	b, _ := periodic.New(lock.New(store, lock.Config{}), periodic.Config{}, job)

	// In the service: go a.Run(ctx). RunOnce makes a single tick now.
	ev, _ := a.RunOnce(context.Background(), job.Name)
	fmt.Println("a:", ev.Outcome, "lock kept:", ev.KeptFor > 40*time.Second)
	ev, _ = b.RunOnce(context.Background(), job.Name)
	fmt.Println("b:", ev.Outcome)
	// Output:
	// a: ran lock kept: true
	// b: skipped
}
