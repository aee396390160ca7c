package locktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// multiKeys are keys of one hash tag, so that a Redis Cluster keeps them in
// one slot, as a caller's related keys are.
func multiKeys(n int) []string {
	tag := backend.NewToken()[:12]
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("lock:{contract:%s}:item:%d", tag, i+1)
	}
	return keys
}

func mustAcquireAll(t *testing.T, c *lock.Client, keys []string, opts lock.Options) lock.MultiLease {
	t.Helper()
	l, err := c.AcquireAll(context.Background(), keys, opts)
	if err != nil {
		t.Fatalf("AcquireAll(%v): %v", keys, err)
	}
	return l
}

// All keys or none: a set with one key held by someone else takes none of
// the others, and says which key was held and for how long.
func testMultiAllOrNothing(t *testing.T, h Harness) {
	c, keys := client(t, h.Backend), multiKeys(3)
	ctx := context.Background()
	other := mustAcquire(t, c, keys[1], lock.Options{TTL: 10 * time.Second})

	_, err := c.AcquireAll(ctx, []string{keys[2], keys[0], keys[1], keys[0]}, lock.Options{TTL: 5 * time.Second})
	held := expectHeld(t, err)
	if len(held.Keys) != 1 || held.Keys[0].Key != keys[1] || held.Keys[0].Remaining <= 5*time.Second {
		t.Fatalf("held keys = %+v, want only %s with about 10s left", held.Keys, keys[1])
	}
	for _, k := range []string{keys[0], keys[2]} {
		l := mustAcquire(t, c, k, lock.Options{TTL: time.Second}) // none was taken
		_ = l.Release(ctx)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}

	set := mustAcquireAll(t, c, []string{keys[2], keys[0], keys[1], keys[0]}, lock.Options{TTL: 5 * time.Second})
	if got := set.Keys(); !slices.Equal(got, keys) {
		t.Errorf("Keys() = %v, want sorted and unique %v", got, keys)
	}
	fences := set.Fences()
	if len(fences) != 3 || fences[1] <= other.Fence() {
		t.Errorf("Fences() = %v, want 3, the second above the earlier holder's %d", fences, other.Fence())
	}
	for _, k := range keys {
		_, err := c.Acquire(ctx, k, lock.Options{TTL: time.Second})
		_ = expectHeld(t, err)
	}
	if remaining, err := set.Remaining(ctx); err != nil || remaining <= 3*time.Second {
		t.Errorf("Remaining = %v, %v", remaining, err)
	}
	if err := set.Extend(ctx, 10*time.Second); err != nil {
		t.Errorf("Extend: %v", err)
	}
	if err := set.Release(ctx); err != nil {
		t.Fatalf("Release of the set: %v", err)
	}
	again := mustAcquireAll(t, c, keys, lock.Options{TTL: time.Second})
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A waiter for a set is woken by the release of the key that blocked it.
func testMultiWaitWokenByRelease(t *testing.T, h Harness) {
	c, keys := client(t, h.Backend), multiKeys(2)
	holder := mustAcquire(t, c, keys[1], lock.Options{TTL: 20 * time.Second})
	done := make(chan error, 1)
	go func() {
		set, err := c.AcquireAll(context.Background(), keys, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
		if err == nil {
			err = set.Release(context.Background())
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	if err := holder.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting AcquireAll: %v", err)
	}
	if latency := time.Since(released); latency > 3*time.Second {
		t.Errorf("set acquired %v after the release; the holder's TTL was 20s", latency)
	}
}

// Losing one key of a set loses the lease.
func testMultiLossOfOneKey(t *testing.T, h Harness) {
	c, keys := client(t, h.Backend), multiKeys(3)
	set := mustAcquireAll(t, c, keys, lock.Options{})
	h.Delete(keys[2])
	select {
	case <-set.Context().Done():
	case <-time.After(10 * watchdogTTL):
		t.Fatal("watchdog did not notice one key of the set was deleted")
	}
	if cause := context.Cause(set.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	if err := set.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of a set missing a key = %v, want ErrNotHeld", err)
	}
	for _, k := range keys { // the keys it still held were released too
		l := mustAcquire(t, c, k, lock.Options{TTL: time.Second})
		_ = l.Release(context.Background())
	}
}

// Many goroutines taking overlapping sets never see a key held twice, never
// hold part of a set, and never deadlock. Each waits for its set as long
// as it takes the others to pass: on a machine busy with other tests, a
// hundred sets through PostgreSQL's adapter took longer than the client's
// usual cap on a wait (ten seconds), and the goroutines still waiting gave
// up, which says nothing of the sets.
func testMultiOverlappingSets(t *testing.T, h Harness) {
	c, keys := clientWaiting(t, h.Backend, 90*time.Second), multiKeys(6)
	const goroutines = 100
	var (
		holders [6]atomic.Int32
		wins    atomic.Int64
		wg      sync.WaitGroup
		errs    = make(chan error, goroutines)
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for g := range goroutines {
		wg.Go(func() {
			// Three consecutive keys, wrapping: every set overlaps others.
			idx := []int{g % 6, (g + 1) % 6, (g + 3) % 6}
			set := make([]string, len(idx))
			for i, k := range idx {
				set[i] = keys[k]
			}
			l, err := c.AcquireAll(ctx, set, lock.Options{TTL: 10 * time.Second, Wait: 90 * time.Second})
			if err != nil {
				errs <- fmt.Errorf("AcquireAll(%v): %w", idx, err)
				return
			}
			for _, k := range idx {
				if n := holders[k].Add(1); n != 1 {
					errs <- fmt.Errorf("key %d held by %d leases at once", k, n)
				}
			}
			time.Sleep(randomDelay(2 * time.Millisecond))
			for _, k := range idx {
				holders[k].Add(-1)
			}
			if err := l.Release(context.Background()); err != nil {
				errs <- fmt.Errorf("Release(%v): %w", idx, err)
			}
			wins.Add(1)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if wins.Load() != goroutines {
		t.Fatalf("%d of %d goroutines got their set", wins.Load(), goroutines)
	}
}
