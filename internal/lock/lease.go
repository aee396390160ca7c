package lock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// lease is the Client's Lease and MultiLease. Every lease has a local
// expiry, the TTL after the start of the acquire or of the last successful
// extension: the store cannot have kept the key longer, so the lease never
// outlives it. A watchdog lease also ends when an extension finds the key
// gone.
//
// The lease's context, and the timer that ends it at the local expiry, are
// made on first use (Context, or a watchdog): a lease that is taken and
// released without anyone asking for its context costs no context and no
// timer. Without them the local expiry is checked whenever the lease is
// used, so every method answers the same either way.
type lease struct {
	client   *Client
	target   target
	token    string // in tokenBuf
	tokenBuf [tokenLen]byte
	fence    int64
	fences   []int64 // AcquireAll's; nil for one key
	ttl      time.Duration
	since    time.Time
	watchdog bool
	// liftedSeal is set when an Acquire with Options.Unseal took a sealed
	// key.
	liftedSeal bool
	// parent is the acquire's context: the lease's context keeps its
	// values but not its cancellation, since the lease lives as long as
	// the lock, not as long as the call that took it.
	parent context.Context

	// endCtx is the context of the store call that ends the lease (end),
	// kept here so that a release allocates none.
	endCtx boundedContext

	mu        sync.Mutex
	ctx       *leaseContext // nil until first asked for
	cancel    context.CancelCauseFunc
	expiresAt time.Time   // local expiry
	expiry    *time.Timer // fires at expiresAt; only while ctx exists
	stop      chan struct{}
	stopped   chan struct{} // closed when the watchdog has returned
	released  bool
	lost      bool
}

// start arms the watchdog of a lease taken without a TTL.
func (l *lease) start(watchdog bool) {
	if !watchdog {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watchdog = true
	l.makeContextLocked()
	l.stop, l.stopped = make(chan struct{}), make(chan struct{})
	go l.watch()
}

func (l *lease) Key() string    { return l.target.key }
func (l *lease) Fence() int64   { return l.fence }
func (l *lease) Keys() []string { return l.target.allKeys() }

func (l *lease) Fences() []int64 {
	if l.fences == nil {
		return []int64{l.fence}
	}
	return slices.Clone(l.fences)
}

// Context implements Lease.
func (l *lease) Context() context.Context {
	l.mu.Lock()
	justLost := l.expiredLocked()
	ctx := l.makeContextLocked()
	l.mu.Unlock()
	if justLost {
		l.client.observer.Lost()
	}
	return ctx
}

// makeContextLocked returns the lease's context, making it (and the expiry
// timer) on first use; a lease that has already ended gets a context that
// has ended with the same cause. Callers hold mu.
func (l *lease) makeContextLocked() *leaseContext {
	if l.ctx != nil {
		return l.ctx
	}
	inner, cancel := context.WithCancelCause(context.WithoutCancel(l.parent))
	l.ctx, l.cancel = &leaseContext{Context: inner, lease: l}, cancel
	switch {
	case l.released:
		cancel(ErrReleased)
	case l.lost:
		cancel(ErrLeaseLost)
	default:
		l.expiry = time.AfterFunc(time.Until(l.expiresAt), l.expire)
	}
	return l.ctx
}

// expiredLocked marks the lease lost once its local expiry has passed and
// reports whether this call did so (the caller then counts the loss, after
// unlocking). Callers hold mu.
func (l *lease) expiredLocked() bool {
	if l.released || l.lost || time.Now().Before(l.expiresAt) {
		return false
	}
	l.lost = true
	if l.expiry != nil {
		l.expiry.Stop()
	}
	if l.cancel != nil {
		l.cancel(ErrLeaseLost)
	}
	return true
}

// expire is the local expiry timer. A timer that fired while an extension
// was moving expiresAt finds it in the future and does nothing.
func (l *lease) expire() {
	l.mu.Lock()
	justLost := l.expiredLocked()
	l.mu.Unlock()
	if justLost {
		l.client.observer.Lost()
	}
}

// lose ends the lease because the store says the lock is gone.
func (l *lease) lose() {
	l.mu.Lock()
	if l.released || l.lost {
		l.mu.Unlock()
		return
	}
	l.lost = true
	if l.expiry != nil {
		l.expiry.Stop()
	}
	if l.cancel != nil {
		l.cancel(ErrLeaseLost)
	}
	l.mu.Unlock()
	l.client.observer.Lost()
}

// state reports whether the lease was released, or lost (its local expiry
// counts).
func (l *lease) state() (released, lost bool) {
	l.mu.Lock()
	justLost := l.expiredLocked()
	released, lost = l.released, l.lost
	l.mu.Unlock()
	if justLost {
		l.client.observer.Lost()
	}
	return released, lost
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
	if l.ended() {
		return ErrNotHeld
	}
	l.mu.Lock()
	deadline := l.expiresAt
	l.mu.Unlock()

	requested := time.Now()
	callCtx, cancel := context.WithDeadline(ctx, deadline)
	ok, err := l.target.extend(callCtx, l.token, ttl)
	cancel()
	l.client.observer.Extended(err == nil && ok)

	l.mu.Lock()
	// Cut off at the local expiry, whose timer (if any) has not run yet.
	justLost := l.expiredLocked()
	switch {
	case l.released:
		l.mu.Unlock()
		return ErrNotHeld
	case l.lost:
		l.mu.Unlock()
		if justLost {
			l.client.observer.Lost()
		}
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
	if l.expiry != nil {
		l.expiry.Reset(time.Until(l.expiresAt))
	}
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
	if err := validateTTL(ttl); err != nil {
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
	return l.end(ctx, giveUp{})
}

// Seal implements Sealer.
func (l *lease) Seal(ctx context.Context, ttl time.Duration) error {
	return l.SealWithNote(ctx, ttl, "")
}

// SealWithNote implements Sealer.
func (l *lease) SealWithNote(ctx context.Context, ttl time.Duration, note string) error {
	if err := validateTTL(ttl); err != nil {
		return err
	}
	if already, _ := l.markReleased(); already {
		return ErrNotHeld
	}
	return l.end(ctx, giveUp{seal: ttl, note: note})
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
	justLost := l.expiredLocked()
	l.released, lost = true, l.lost
	if l.expiry != nil {
		l.expiry.Stop()
	}
	stop, stopped := l.stop, l.stopped
	l.mu.Unlock()
	if justLost {
		l.client.observer.Lost()
	}
	if stop != nil {
		close(stop)
		<-stopped
	}
	return false, lost
}

// giveUp is how a lease ends in the store: deleted (the zero value),
// sealed for seal (with note), or kept owner-held for keep (ReleaseAfter).
type giveUp struct {
	seal time.Duration
	note string
	keep time.Duration
}

// end makes the store call that gives the lock up on a context that keeps
// the caller's values but not its cancellation, bounded by the release
// timeout (releaseBounds), then ends the lease's context with ErrReleased.
// A call that found the lock no longer ours is ErrNotHeld.
func (l *lease) end(ctx context.Context, how giveUp) error {
	sent := time.Now()
	l.endCtx = l.client.releases.bound(ctx, sent)
	ctx = &l.endCtx
	var (
		ok  bool
		err error
	)
	switch {
	case how.keep > 0:
		ok, err = l.target.extend(ctx, l.token, how.keep)
	case how.seal > 0:
		ok, err = l.target.seal(ctx, l.token, how.seal, how.note)
	default:
		ok, err = l.target.release(ctx, l.token)
	}
	if how.seal > 0 && ok && err == nil && l.client.seals != nil && l.target.multi == nil && l.client.canSeal() {
		l.client.seals.remember(l.target.key, how.note, sent)
	}
	l.mu.Lock()
	if l.cancel != nil {
		l.cancel(ErrReleased)
	}
	l.mu.Unlock()
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
	if l.watchdog {
		return time.Time{}, false
	}
	return l.expiresAt, true
}
