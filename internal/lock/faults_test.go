package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// faultyExtend is a memory store whose extensions can be made to fail
// (partition), to fail a given number of times, or to answer late.
type faultyExtend struct {
	*memlock.Backend
	partitioned atomic.Bool  // every Extend fails at once
	failNext    atomic.Int32 // the next n Extends fail at once
	// lateReply, when set, is how long an Extend's reply takes after the
	// store has applied it; with honourCtx the call gives up when its
	// context ends (the reply is lost, the extension stays applied).
	lateReply time.Duration
	honourCtx bool

	mu     sync.Mutex
	lastOK time.Time // when the last successful Extend call began
}

func newFaultyExtend() *faultyExtend { return &faultyExtend{Backend: memlock.New()} }

func (b *faultyExtend) Extend(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	began := time.Now()
	if b.partitioned.Load() {
		return false, lock.ErrUnavailable
	}
	if b.failNext.Add(-1) >= 0 {
		return false, lock.ErrUnavailable
	}
	ok, err := b.Backend.Extend(ctx, key, token, ttl)
	if ok {
		b.mu.Lock()
		b.lastOK = began
		b.mu.Unlock()
	}
	if b.lateReply > 0 {
		select {
		case <-time.After(b.lateReply):
		case <-ctx.Done():
			if b.honourCtx {
				return false, ctx.Err()
			}
			<-time.After(b.lateReply)
		}
	}
	return ok, err
}

func (b *faultyExtend) lastSuccess() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastOK
}

// A watchdog lease whose store becomes unreachable ends no later than the
// store can have kept its key: its TTL after the last successful extension
// began. It must not wait for the next tick to notice.
func TestWatchdogLeaseEndsWhenItsKeyCanHaveExpired(t *testing.T) {
	t.Parallel()
	// Extended every 400 ms. The margin below is a sixth of the TTL; at
	// 600 ms that was 100 ms, which a -race run on busy cores overran
	// now and then (a lease ended 158 ms after its key's expiry).
	const ttl = 1200 * time.Millisecond
	const trials = 8
	overshoots := make(chan time.Duration, trials)
	var wg sync.WaitGroup
	for i := range trials {
		wg.Go(func() {
			store := newFaultyExtend()
			c := lock.New(store, lock.Config{WatchdogTTL: ttl})
			l, err := c.Acquire(context.Background(), "k", lock.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			defer func() { _ = l.Release(context.Background()) }()
			// Partition at a different phase of the extension cycle in
			// each trial, after at least one successful extension. The
			// phase counts from that extension, not from the acquire:
			// on a busy machine the first one (due a third of the TTL
			// in) can come late, and a partition before it left no
			// success to measure the overshoot from.
			deadline := time.Now().Add(5 * ttl)
			for store.lastSuccess().IsZero() {
				if time.Now().After(deadline) {
					t.Error("no successful extension in 5 TTLs")
					return
				}
				time.Sleep(time.Millisecond)
			}
			time.Sleep(time.Until(store.lastSuccess().Add(50*time.Millisecond + time.Duration(i)*ttl/(3*trials))))
			store.partitioned.Store(true)
			select {
			case <-l.Context().Done():
			case <-time.After(5 * ttl):
				t.Error("lease never ended while its store was unreachable")
				return
			}
			ended := time.Now()
			if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
				t.Errorf("cause = %v, want ErrLeaseLost", cause)
			}
			overshoots <- ended.Sub(store.lastSuccess().Add(ttl))
		})
	}
	wg.Wait()
	close(overshoots)
	var worst time.Duration
	for o := range overshoots {
		worst = max(worst, o)
	}
	// The lease ends at the store's expiry; a tick-driven check would be
	// up to a third of the TTL (400 ms) late. Half of that is left for a
	// busy machine's timer latency.
	if worst > ttl/6 {
		t.Fatalf("lease outlived its key by up to %v (TTL %v)", worst, ttl)
	}
	t.Logf("worst lease end after the key's expiry: %v", worst)
}

// Two transient errors in a row do not cost a healthy watchdog lease: a
// failed extension is retried at once, within the time the lease has left.
func TestWatchdogSurvivesTransientErrors(t *testing.T) {
	t.Parallel()
	const ttl = 600 * time.Millisecond
	store := newFaultyExtend()
	c := lock.New(store, lock.Config{WatchdogTTL: ttl})
	l, err := c.Acquire(context.Background(), "k", lock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	store.failNext.Store(2)
	time.Sleep(3 * ttl)
	if err := l.Context().Err(); err != nil {
		t.Fatalf("lease lost after two transient extension errors: %v", context.Cause(l.Context()))
	}
	if left := store.failNext.Load(); left >= 0 {
		t.Fatalf("the watchdog made only %d of the 2 failing extensions", 2-left)
	}
	if _, err := c.Acquire(context.Background(), "k", lock.Options{TTL: time.Second}); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("another Acquire = %v, want ErrHeld: the lease's key was not kept", err)
	}
}

// An extension that the store grants after the lease was declared lost
// (its reply arrived after the local expiry) is not a success: the lease's
// work has been told to stop, so Extend says ErrNotHeld and the key is
// released rather than kept for a new TTL by aborted work.
func TestLateExtensionOfALostLeaseIsUndone(t *testing.T) {
	t.Parallel()
	for name, honourCtx := range map[string]bool{"reply arrives late": false, "reply lost at the deadline": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newFaultyExtend()
			store.lateReply, store.honourCtx = 400*time.Millisecond, honourCtx
			c := lock.New(store, lock.Config{})
			l, err := c.Acquire(context.Background(), "k", lock.Options{TTL: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := l.Extend(ctx, 10*time.Second); !errors.Is(err, lock.ErrNotHeld) {
				t.Fatalf("Extend answered after the lease expired = %v, want ErrNotHeld", err)
			}
			if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
				t.Errorf("cause = %v, want ErrLeaseLost", cause)
			}
			start := time.Now()
			next, err := lock.New(store.Backend, lock.Config{}).Acquire(context.Background(), "k",
				lock.Options{TTL: time.Second, Wait: 8 * time.Second})
			if err != nil {
				t.Fatalf("key still held by the late extension: %v", err)
			}
			defer func() { _ = next.Release(context.Background()) }()
			if waited := time.Since(start); waited > 3*time.Second {
				t.Errorf("key freed %v later; the late extension's 10s was kept", waited)
			}
		})
	}
}
