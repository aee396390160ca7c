package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// Adopting the port: build a Client on a backend (redislock.New(redisClient)
// or pglock.New(pool) in production; memlock here), then run the critical
// section with WithLock. fn's context ends if the lock is lost, and the
// fence goes to the system of record with the write.
func ExampleWithLock() {
	locker := lock.New(memlock.New(), lock.Config{})
	err := lock.WithLock(context.Background(), locker, "lock:{schedule:7}:seat:42", lock.Options{TTL: 5 * time.Second},
		func(ctx context.Context, lease lock.Lease) error {
			// e.g. INSERT ... only if lease.Fence() is above the seat's fence
			fmt.Println("holding", lease.Key(), "fenced:", lease.Fence() > 0)
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// holding lock:{schedule:7}:seat:42 fenced: true
	// error: <nil>
}

// Fail fast (the seed's tryLock(0, lease)): a held lock is an immediate
// *HeldError that says how long the holder still has.
func ExampleClient_Acquire_failFast() {
	locker := lock.New(memlock.New(), lock.Config{})
	ctx := context.Background()
	first, _ := locker.Acquire(ctx, "report", lock.Options{TTL: 3 * time.Second})
	defer first.Release(ctx)

	_, err := locker.Acquire(ctx, "report", lock.Options{TTL: 3 * time.Second})
	var held *lock.HeldError
	if errors.As(err, &held) {
		fmt.Println("held; retry in about", held.Remaining.Round(time.Second))
	}
	// Output: held; retry in about 3s
}

// A bounded wait (the seeds' waitTime): the waiter sleeps until the holder
// releases — woken by the release itself — or until Wait runs out.
func ExampleClient_Acquire_wait() {
	locker := lock.New(memlock.New(), lock.Config{MaxWait: 10 * time.Second})
	ctx := context.Background()
	holder, _ := locker.Acquire(ctx, "seat", lock.Options{TTL: time.Minute})
	time.AfterFunc(50*time.Millisecond, func() { holder.Release(ctx) })

	waiter, err := locker.Acquire(ctx, "seat", lock.Options{TTL: time.Minute, Wait: 2 * time.Second})
	fmt.Println("acquired after the release:", err == nil, "newer fence:", waiter.Fence() > holder.Fence())
	waiter.Release(ctx)
	// Output: acquired after the release: true newer fence: true
}

// No TTL: the lease is kept alive by a watchdog (every WatchdogTTL/3) for as
// long as the job runs, and its context ends if the lock is lost anyway.
func ExampleClient_Acquire_watchdog() {
	backend := memlock.New()
	locker := lock.New(backend, lock.Config{WatchdogTTL: 90 * time.Millisecond})
	ctx := context.Background()
	lease, _ := locker.Acquire(ctx, "nightly-export", lock.Options{})

	time.Sleep(300 * time.Millisecond) // longer than the TTL: the watchdog extends
	fmt.Println("still held:", lease.Context().Err() == nil)

	backend.Delete("nightly-export") // someone deletes the key behind our back
	<-lease.Context().Done()
	fmt.Println("lease ended:", context.Cause(lease.Context()))
	// Output:
	// still held: true
	// lease ended: lock: lease lost
}
