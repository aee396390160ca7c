package locktest

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// A lease lives as long as the lock, not as long as the context that
// acquired it: the common "acquire with a short timeout, then cancel" must
// not end the lease while the lock is held (and, with a watchdog, extended).
func testLeaseOutlivesAcquireContext(t *testing.T, h Harness) {
	c := client(t, h.Backend)
	for name, opts := range map[string]lock.Options{
		"fixed TTL": {TTL: 5 * time.Second},
		"watchdog":  {},
	} {
		key := newKey()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		l, err := c.Acquire(ctx, key, opts)
		cancel()
		if err != nil {
			t.Fatalf("%s: Acquire: %v", name, err)
		}
		time.Sleep(2 * watchdogTTL) // the watchdog extends meanwhile
		if err := l.Context().Err(); err != nil {
			t.Errorf("%s: lease context ended with its acquire context: %v", name, context.Cause(l.Context()))
		}
		_, err = c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
		_ = expectHeld(t, err)
		if err := l.Release(context.Background()); err != nil {
			t.Errorf("%s: Release: %v", name, err)
		}
		if cause := context.Cause(l.Context()); cause != lock.ErrReleased {
			t.Errorf("%s: cause after Release = %v, want ErrReleased", name, cause)
		}
	}
}

// An already ended context returns at once, never reaching the store, and
// grants nothing.
func testEndedContext(t *testing.T, h Harness) {
	counting := &countingBackend{Backend: h.Backend}
	c, key := client(t, counting), newKey()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, wait := range []time.Duration{0, time.Second} {
		l, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: wait})
		if l != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire(wait %v) with an ended context = %v, %v; want no lease and context.Canceled", wait, l, err)
		}
		if errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("ended context reported as an outage: %v", err)
		}
	}
	if n := counting.tries.Load(); n != 0 {
		t.Errorf("store called %d times for an ended context, want 0", n)
	}
	free := mustAcquire(t, client(t, h.Backend), key, lock.Options{TTL: time.Second})
	_ = free.Release(context.Background())
}

// A wait cut short by the caller's context is the lock being held for as
// long as the caller would wait, never a store outage: many short deadlines
// on a healthy store all give a *HeldError wrapping the context's error.
func testWaitCutByContextIsHeld(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	holder := mustAcquire(t, c, key, lock.Options{TTL: 20 * time.Second})
	defer func() { _ = holder.Release(context.Background()) }()
	const waiters = 200
	var wg sync.WaitGroup
	var unavailable, other atomic.Int64
	errs := make(chan error, waiters)
	for i := range waiters {
		wg.Go(func() {
			// Deadlines from 1 ms to 40 ms land in every step of the
			// wait: the first try, the subscribe, the second try, asleep.
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+i%40)*time.Millisecond)
			defer cancel()
			_, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
			var held *lock.HeldError
			switch {
			case errors.Is(err, lock.ErrUnavailable):
				unavailable.Add(1)
				errs <- err
			case errors.As(err, &held) && errors.Is(err, context.DeadlineExceeded) && held.Remaining > 0:
			case errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, lock.ErrHeld):
				// The deadline ended the very first try: nothing was
				// known about the holder yet. Allowed, but not an outage.
			default:
				other.Add(1)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("wait cut by the caller's context: %v", err)
	}
	if unavailable.Load() > 0 || other.Load() > 0 {
		t.Fatalf("%d of %d waits reported ErrUnavailable, %d another error", unavailable.Load(), waiters, other.Load())
	}
}

// lostReply runs TryAcquire in the store, then reports a failure: the reply
// was lost after the store had acted on it.
type lostReply struct {
	backend.Backend
	lose atomic.Bool
}

func (b *lostReply) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	g, err := b.Backend.TryAcquire(ctx, key, token, ttl)
	if err == nil && b.lose.Load() {
		return backend.Grant{}, lock.ErrUnavailable
	}
	return g, err
}

// An acquire whose reply was lost must not leave the key held by a token
// nobody will release: the client releases it in the background, so the
// key is free long before the TTL of the lost grant.
func testAmbiguousAcquireIsReleased(t *testing.T, h Harness) {
	faulty := &lostReply{Backend: h.Backend}
	faulty.lose.Store(true)
	c, key := client(t, faulty), newKey()
	if _, err := c.Acquire(context.Background(), key, lock.Options{TTL: 20 * time.Second}); !errors.Is(err, lock.ErrUnavailable) {
		t.Fatalf("Acquire with a lost reply = %v, want ErrUnavailable", err)
	}
	start := time.Now()
	l, err := client(t, h.Backend).Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("key still held after a lost acquire reply: %v", err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("key freed %v after the lost reply; the orphan's TTL was 20s, so it was not released", waited)
	}
}

// Re-running an acquire with the token that holds the key succeeds with
// the same fence: a retried request whose first reply was lost gets its own
// lock back instead of being refused by it.
func testAcquireIdempotentPerToken(t *testing.T, h Harness) {
	ctx, key, token := context.Background(), newKey(), backend.NewToken()
	first, err := h.Backend.TryAcquire(ctx, key, token, 5*time.Second)
	if err != nil || !first.Acquired {
		t.Fatalf("first TryAcquire = %+v, %v", first, err)
	}
	again, err := h.Backend.TryAcquire(ctx, key, token, 5*time.Second)
	if err != nil || !again.Acquired || again.Fence != first.Fence {
		t.Fatalf("TryAcquire again with the holder's token = %+v, %v; want acquired with fence %d", again, err, first.Fence)
	}
	other, err := h.Backend.TryAcquire(ctx, key, backend.NewToken(), 5*time.Second)
	if err != nil || other.Acquired {
		t.Fatalf("TryAcquire with another token = %+v, %v; want held", other, err)
	}
	if ok, err := h.Backend.Release(ctx, key, token); !ok || err != nil {
		t.Errorf("Release = %v, %v", ok, err)
	}
}

// A holder asks the store whether it still holds the lock and for how long;
// a fixed-TTL lease's context has its local expiry as deadline.
func testOwnershipCheck(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	before := time.Now()
	l := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	after := time.Now()
	remaining, err := l.Remaining(context.Background())
	if err != nil || remaining <= 3*time.Second || remaining > 5*time.Second {
		t.Fatalf("Remaining = %v, %v; want in (3s, 5s]", remaining, err)
	}
	deadline, ok := l.Context().Deadline()
	if !ok || deadline.Before(before.Add(5*time.Second)) || deadline.After(after.Add(5*time.Second)) {
		t.Errorf("Context().Deadline() = %v, %v; want the local expiry, 5s after the acquire began", deadline, ok)
	}
	if err := l.Extend(context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if moved, _ := l.Context().Deadline(); !moved.After(deadline.Add(4 * time.Second)) {
		t.Errorf("Deadline after Extend(10s) = %v, want about 10s from now", moved)
	}
	h.Delete(key)
	if _, err := l.Remaining(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Remaining after the key was deleted = %v, want ErrNotHeld", err)
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	successor := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	if _, err := l.Remaining(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Remaining of a lost lease while another holds the key = %v, want ErrNotHeld", err)
	}
	if err := successor.Release(context.Background()); err != nil {
		t.Errorf("successor Release: %v", err)
	}
	watched := mustAcquire(t, c, newKey(), lock.Options{})
	defer func() { _ = watched.Release(context.Background()) }()
	if _, ok := watched.Context().Deadline(); ok {
		t.Error("a watchdog lease's context has a deadline, want none")
	}
}

func randomDelay(max time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(max))) }
