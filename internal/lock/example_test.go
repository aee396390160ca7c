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

// Fail fast (Redisson's tryLock(0, lease)): a held lock is an immediate
// *HeldError that says how long the holder still has.
func ExampleClient_Acquire_failFast() {
	locker := lock.New(memlock.New(), lock.Config{})
	ctx := context.Background()
	first, _ := locker.Acquire(ctx, "report", lock.Options{TTL: 3 * time.Second})
	defer func() { _ = first.Release(ctx) }()

	_, err := locker.Acquire(ctx, "report", lock.Options{TTL: 3 * time.Second})
	var held *lock.HeldError
	if errors.As(err, &held) {
		fmt.Println("held; retry in about", held.Remaining.Round(time.Second))
	}
	// Output: held; retry in about 3s
}

// A bounded wait (Redisson's waitTime): the waiter sleeps until the holder
// releases — woken by the release itself — or until Wait runs out.
func ExampleClient_Acquire_wait() {
	locker := lock.New(memlock.New(), lock.Config{MaxWait: 10 * time.Second})
	ctx := context.Background()
	holder, _ := locker.Acquire(ctx, "seat", lock.Options{TTL: time.Minute})
	time.AfterFunc(50*time.Millisecond, func() { _ = holder.Release(ctx) })

	waiter, err := locker.Acquire(ctx, "seat", lock.Options{TTL: time.Minute, Wait: 2 * time.Second})
	fmt.Println("acquired after the release:", err == nil, "newer fence:", waiter.Fence() > holder.Fence())
	_ = waiter.Release(ctx)
	// Output: acquired after the release: true newer fence: true
}

// No TTL: the lease is kept alive by a watchdog (every WatchdogTTL/3) for as
// long as the job runs, and its context ends if the lock is lost anyway.
func ExampleClient_Acquire_watchdog() {
	backend := memlock.New()
	locker := lock.New(backend, lock.Config{WatchdogTTL: 900 * time.Millisecond})
	ctx := context.Background()
	lease, _ := locker.Acquire(ctx, "nightly-export", lock.Options{})

	time.Sleep(2 * time.Second) // longer than the TTL: the watchdog extends
	fmt.Println("still held:", lease.Context().Err() == nil)

	backend.Delete("nightly-export") // someone deletes the key behind our back
	<-lease.Context().Done()
	fmt.Println("lease ended:", context.Cause(lease.Context()))
	// Output:
	// still held: true
	// lease ended: lock: lease lost
}

// The context given to Acquire bounds the acquiring, never the lease: a
// short timeout for the acquire is safe. The work then runs under Join, which
// ends when the caller gives up or the lock is lost, whichever comes first.
func ExampleJoin() {
	locker := lock.New(memlock.New(), lock.Config{})
	request := context.Background()

	acquireCtx, cancel := context.WithTimeout(request, 100*time.Millisecond)
	lease, err := locker.Acquire(acquireCtx, "seat", lock.Options{TTL: 5 * time.Second})
	cancel() // ends the acquire's context, not the lease
	if err != nil {
		return
	}
	defer func() { _ = lease.Release(request) }()

	work, stop := lock.Join(request, lease)
	defer stop()
	fmt.Println("lease alive:", lease.Context().Err() == nil, "work alive:", work.Err() == nil)
	// Output: lease alive: true work alive: true
}

// Several seats at once: all of them or none, each with its own fence. A
// held seat is named in the HeldError, with how long its holder has left.
func ExampleClient_AcquireAll() {
	locker := lock.New(memlock.New(), lock.Config{})
	ctx := context.Background()
	seats := []string{"lock:{schedule:7}:seat:3", "lock:{schedule:7}:seat:4"}

	other, _ := locker.Acquire(ctx, seats[1], lock.Options{TTL: 3 * time.Second})
	_, err := locker.AcquireAll(ctx, seats, lock.Options{TTL: 5 * time.Second})
	var held *lock.HeldError
	if errors.As(err, &held) {
		fmt.Println("held:", held.Keys[0].Key, "for about", held.Keys[0].Remaining.Round(time.Second))
	}
	_ = other.Release(ctx)

	both, err := locker.AcquireAll(ctx, seats, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		return
	}
	fmt.Println("holding", len(both.Keys()), "seats, fenced:", both.Fences()[0] > 0 && both.Fences()[1] > 0)
	fmt.Println("release:", both.Release(ctx))
	// Output:
	// held: lock:{schedule:7}:seat:4 for about 3s
	// holding 2 seats, fenced: true
	// release: <nil>
}

// A holder can ask the store whether it still holds its lock, and for how
// long, in one owner-checked call.
func ExampleLease_Remaining() {
	backend := memlock.New()
	locker := lock.New(backend, lock.Config{})
	ctx := context.Background()
	lease, _ := locker.Acquire(ctx, "seat", lock.Options{TTL: 5 * time.Second})

	left, err := lease.Remaining(ctx)
	fmt.Println("held for about", left.Round(time.Second), err)

	backend.Delete("seat") // an operator clears the key
	_, err = lease.Remaining(ctx)
	fmt.Println(err, "/", context.Cause(lease.Context()))
	// Output:
	// held for about 5s <nil>
	// lock: not held / lock: lease lost
}
