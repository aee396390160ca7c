package lock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// lease is the Client's Lease and MultiLease. Its context ends when the
// lease does. Every lease has a local expiry, the TTL after the start of
// the acquire or of the last successful extension, and a timer that ends
// the context there: the store cannot have kept the key longer, so the
// lease never outlives it. A watchdog lease also ends when an extension
// finds the key gone.
type lease struct {
	client   *Client
	target   target
	token    string
	fences   []int64
	ttl      time.Duration
	since    time.Time
	watchdog bool

	ctx    *leaseContext
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	expiresAt time.Time   // local expiry
	expiry    *time.Timer // fires at expiresAt
	stop      chan struct{}
	stopped   chan struct{} // closed when the watchdog has returned
	released  bool
	lost      bool
}

// newLease makes the lease of a successful acquire. Its context keeps the
// values of the acquire's context but not its cancellation: the lease lives
// as long as the lock, not as long as the call that took it.
func newLease(acquireCtx context.Context, c *Client, t target, token string, fences []int64, ttl time.Duration, since time.Time) *lease {
	l := &lease{client: c, target: t, token: token, fences: fences, ttl: ttl, since: since, expiresAt: since.Add(ttl)}
	inner, cancel := context.WithCancelCause(context.WithoutCancel(acquireCtx))
	l.ctx, l.cancel = &leaseContext{Context: inner, lease: l}, cancel
	return l
}

// start arms the local expiry, and the watchdog.
func (l *lease) start(watchdog bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchdog = watchdog
	l.expiry = time.AfterFunc(time.Until(l.expiresAt), l.expire)
	if watchdog {
		l.stop, l.stopped = make(chan struct{}), make(chan struct{})
		go l.watch()
	}
}

func (l *lease) Key() string              { return l.target.keys[0] }
func (l *lease) Fence() int64             { return l.fences[0] }
func (l *lease) Keys() []string           { return slices.Clone(l.target.keys) }
func (l *lease) Fences() []int64          { return slices.Clone(l.fences) }
func (l *lease) Context() context.Context { return l.ctx }

// expire is the local expiry timer. A timer that fired while an extension
// was moving expiresAt finds it in the future and does nothing.
func (l *lease) expire() {
	l.mu.Lock()
	if l.released || l.lost || time.Now().Before(l.expiresAt) {
		l.mu.Unlock()
		return
	}
	l.lost = true
	l.mu.Unlock()
	l.endLost()
}

// lose ends the lease because the store says the lock is gone.
func (l *lease) lose() {
	l.mu.Lock()
	if l.released || l.lost {
		l.mu.Unlock()
		return
	}
	l.lost = true
	l.expiry.Stop()
	l.mu.Unlock()
	l.endLost()
}

func (l *lease) endLost() {
	l.client.observer.Lost()
	l.cancel(ErrLeaseLost)
}

// state reports whether the lease was released, or lost.
func (l *lease) state() (released, lost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released, l.lost
}

// ended reports whether the lease was released or lost.
func (l *lease) ended() bool {
	released, lost := l.state()
	return released || lost
}

// extendOnce makes one extension call, cut off at the local expiry, and
// settles its outcome: on success it moves the local expiry; on "not held"
// it loses the lease. When the lease was declared lost while the call was
// in flight, a success came too late — the lease's work has been told to
// stop — so the key is released again and the answer is ErrNotHeld.
func (l *lease) extendOnce(ctx context.Context, ttl time.Duration) error {
	l.mu.Lock()
	if l.released || l.lost {
		l.mu.Unlock()
		return ErrNotHeld
	}
	deadline := l.expiresAt
	l.mu.Unlock()

	requested := time.Now()
	callCtx, cancel := context.WithDeadline(ctx, deadline)
	ok, err := l.target.extend(callCtx, l.token, ttl)
	cancel()
	l.client.observer.Extended(err == nil && ok)

	l.mu.Lock()
	if !l.released && !l.lost && !time.Now().Before(l.expiresAt) {
		// Cut off at the local expiry, whose timer has not run yet.
		l.lost = true
		defer l.endLost()
	}
	switch {
	case l.released:
		l.mu.Unlock()
		return ErrNotHeld
	case l.lost:
		l.mu.Unlock()
		if ok || err != nil { // granted, or maybe granted, too late
			l.releaseInBackground(requested.Add(ttl))
		}
		return ErrNotHeld
	case err != nil:
		l.mu.Unlock()
		return err
	case !ok:
		l.mu.Unlock()
		l.lose()
		return ErrNotHeld
	}
	l.expiresAt = requested.Add(ttl)
	l.expiry.Reset(time.Until(l.expiresAt))
	l.mu.Unlock()
	return nil
}

// releaseInBackground gives up a key that a lost lease may still hold in
// the store. The lease is already over for its user; this only frees the
// key before its TTL.
func (l *lease) releaseInBackground(expires time.Time) {
	l.client.forget(l.target, l.token, expires)
}

// Extend implements Lease.
func (l *lease) Extend(ctx context.Context, ttl time.Duration) error {
	if err := ValidateTTL(ttl); err != nil {
		return err
	}
	return l.extendOnce(ctx, ttl)
}

// Remaining implements Lease.
func (l *lease) Remaining(ctx context.Context) (time.Duration, error) {
	if l.ended() {
		return 0, ErrNotHeld
	}
	remaining, held, err := l.target.holds(ctx, l.token)
	if err != nil {
		return 0, err
	}
	if !held {
		l.lose()
		return 0, ErrNotHeld
	}
	return remaining, nil
}

// Release implements Lease.
func (l *lease) Release(ctx context.Context) error {
	if already, _ := l.markReleased(); already {
		return ErrNotHeld
	}
	return l.end(ctx, func(ctx context.Context) (bool, error) { return l.target.release(ctx, l.token) })
}

// markReleased ends the lease's local life: no more expiry timer or
// watchdog (it waits for the watchdog, so that no extension races what
// comes next). It reports whether the lease had been released already, and
// whether it had been lost.
func (l *lease) markReleased() (already, lost bool) {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return true, l.lost
	}
	l.released, lost = true, l.lost
	l.expiry.Stop()
	stop, stopped := l.stop, l.stopped
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
	return false, lost
}

// end makes the store call that gives the lock up (delete it, or shorten
// it) on a context detached from the caller's and bounded by the release
// timeout, then ends the lease's context with ErrReleased. A call that
// found the lock no longer ours is ErrNotHeld.
func (l *lease) end(ctx context.Context, giveUp func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.client.releaseTimeout)
	defer cancel()
	ok, err := giveUp(ctx)
	l.cancel(ErrReleased)
	l.client.observer.Released(time.Since(l.since), err == nil && !ok)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotHeld
	}
	return nil
}

// leaseContext is the lease's Context: a cancel-cause context whose
// Deadline is the lease's current local expiry (for a fixed-TTL lease).
type leaseContext struct {
	context.Context
	lease *lease
}

func (c *leaseContext) Deadline() (time.Time, bool) {
	l := c.lease
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watchdog || l.expiry == nil {
		return time.Time{}, false
	}
	return l.expiresAt, true
}
