package lock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Defaults of Config.
const (
	DefaultWatchdogTTL    = 30 * time.Second // Redisson's lockWatchdogTimeout
	DefaultMaxWait        = 10 * time.Second
	DefaultReleaseTimeout = 2 * time.Second
)

// Config tunes a Client. Zero values take the defaults.
type Config struct {
	// MaxWait caps Options.Wait.
	MaxWait time.Duration
	// WatchdogTTL is the lease of a lock taken with Options.TTL zero; the
	// watchdog extends it every WatchdogTTL/3.
	WatchdogTTL time.Duration
	// ReleaseTimeout bounds a Release, independent of the caller's
	// context.
	ReleaseTimeout time.Duration
	// Observer receives metrics; nil discards them.
	Observer Observer
	// Logger receives watchdog failures; nil discards them.
	Logger *slog.Logger
	// RememberSeals answers Acquire of a sealed key from memory for
	// SealMemory after the store last said it was sealed, or after this
	// Client sealed it: a hammered sealed key costs the store one call per
	// SealMemory instead of one per Acquire. Safe whatever other Clients
	// do: an Acquire with Options.Unseal waits SealMemory after lifting a
	// seal.
	RememberSeals bool
}

// Client implements Locker on a backend.Backend.
type Client struct {
	backend        backend.Backend
	maxWait        time.Duration
	watchdogTTL    time.Duration
	releaseTimeout time.Duration
	releases       *releaseBounds
	seals          *sealMemory // nil unless Config.RememberSeals
	observer       Observer
	log            *slog.Logger

	forgetting sync.WaitGroup // background releases (forget)
	// closing ends when Close is called: it cancels the background
	// releases, even one waiting on a store that does not answer.
	closing       context.Context
	cancelClosing context.CancelFunc
}

var (
	_ Locker      = (*Client)(nil)
	_ MultiLocker = (*Client)(nil)
)

// New returns a Client that takes locks in backend.
func New(store backend.Backend, cfg Config) *Client {
	c := &Client{
		backend:        store,
		maxWait:        or(cfg.MaxWait, DefaultMaxWait),
		watchdogTTL:    or(cfg.WatchdogTTL, DefaultWatchdogTTL),
		releaseTimeout: or(cfg.ReleaseTimeout, DefaultReleaseTimeout),
		observer:       cfg.Observer,
		log:            cfg.Logger,
	}
	c.releases = newReleaseBounds(c.releaseTimeout)
	c.closing, c.cancelClosing = context.WithCancel(context.Background())
	if cfg.RememberSeals {
		c.seals = newSealMemory()
	}
	if c.observer == nil {
		c.observer = nopObserver{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

func or(d, fallback time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return fallback
}

// Acquire implements Locker.
func (c *Client) Acquire(ctx context.Context, key string, opts Options) (Lease, error) {
	l, err := c.acquireTarget(ctx, singleTarget(c.backend, key), opts)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// AcquireAll implements MultiLocker.
func (c *Client) AcquireAll(ctx context.Context, keys []string, opts Options) (MultiLease, error) {
	t, err := multiTarget(c.backend, keys)
	if err != nil {
		return nil, err
	}
	l, err := c.acquireTarget(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (c *Client) acquireTarget(ctx context.Context, t target, opts Options) (*lease, error) {
	ttl, watchdog := opts.TTL, opts.TTL == 0
	if watchdog {
		ttl = c.watchdogTTL
	}
	if err := validateTTL(ttl); err != nil {
		return nil, err
	}
	// An ended context never reaches the store: nothing to clean up, and
	// no lease granted to a caller that has already given up.
	if err := ctx.Err(); err != nil {
		c.observer.Acquired(OutcomeError, 0)
		return nil, fmt.Errorf("lock: acquire %q: %w", t.name(), err)
	}
	start := time.Now()
	if c.seals != nil && t.multi == nil && !opts.Unseal {
		if sealed := c.seals.sealed(t.key, start); sealed != nil {
			c.observer.Acquired(OutcomeSealed, 0)
			return nil, sealed
		}
	}
	l, err := c.acquire(ctx, t, ttl, min(opts.Wait, c.maxWait), opts.Unseal)
	if err == nil && l.liftedSeal {
		err = c.outwaitSealMemory(ctx, l)
	}
	waited := waitedIf(opts.Wait, time.Since(start))
	switch {
	case err == nil:
		c.observer.Acquired(OutcomeAcquired, waited)
		l.start(watchdog)
		return l, nil
	case errors.Is(err, ErrHeld):
		c.observer.Acquired(OutcomeHeld, waited)
	case errors.Is(err, ErrSealed):
		c.observer.Acquired(OutcomeSealed, waited)
	default:
		c.observer.Acquired(OutcomeError, waited)
	}
	return nil, err
}

func waitedIf(wait, waited time.Duration) time.Duration {
	if wait <= 0 {
		return 0
	}
	return waited
}

// acquire tries once, then, if allowed to wait, subscribes to the keys'
// releases and tries again after each release — or when the holder's TTL
// runs out, so that a holder that died (no release message) or a message
// that was missed never strands a waiter.
//
// Once a holder has been seen, every way the wait can end without the lock
// is a *HeldError: the wait running out, and also the caller's context
// ending in the middle of a subscribe or a try (then HeldError.Err is the
// context's error). Only a store failure while the context is alive is
// ErrUnavailable. A sealed key ends the wait at once: there is nothing to
// wait for.
func (c *Client) acquire(ctx context.Context, t target, ttl, wait time.Duration, unseal bool) (*lease, error) {
	deadline := time.Now().Add(wait)
	l, held, err := c.try(ctx, t, ttl, unseal)
	if err != nil {
		if errors.Is(err, ErrSealed) {
			return nil, err
		}
		if ended := callerDeadline(ctx, err); ended != nil {
			return nil, fmt.Errorf("lock: acquire %q: %w", t.name(), ended)
		}
		return nil, err
	}
	if l != nil {
		return l, nil
	}
	if wait <= 0 {
		return nil, heldError(held, nil)
	}
	// The subscription must be confirmed within the wait, or we give up
	// as if the lock had stayed held.
	subCtx, cancel := context.WithDeadline(ctx, deadline)
	sub, err := t.subscribe(subCtx)
	cancel()
	if err != nil {
		if ended := contextEnded(ctx); ended != nil {
			return nil, heldError(held, ended)
		}
		if contextEnded(subCtx) != nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, heldError(held, nil) // the wait ran out
		}
		return nil, fmt.Errorf("lock: wait for %q: %w", t.name(), err)
	}
	defer sub.Close()
	for {
		// Try again now that we are subscribed: the holder may have
		// released between the first try and the subscription.
		var again []KeyHeld
		l, again, err = c.try(ctx, t, ttl, unseal)
		switch {
		case err != nil && callerDeadline(ctx, err) != nil:
			return nil, heldError(held, callerDeadline(ctx, err))
		case err != nil:
			return nil, err
		case l != nil:
			return l, nil
		}
		held = again
		left := time.Until(deadline)
		if left <= 0 {
			return nil, heldError(held, nil)
		}
		timer := time.NewTimer(recheckAfter(shortest(held), left))
		select {
		case <-sub.Released():
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, heldError(held, ctx.Err())
		}
		timer.Stop()
	}
}

// contextEnded is ctx's error, or context.DeadlineExceeded once its deadline
// has passed even if its timer has not fired yet: a network call bounded by
// that deadline fails at the same instant, and that failure is the caller's
// deadline, not an outage.
func contextEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// callerDeadline is contextEnded(ctx), or context.DeadlineExceeded when
// the store says it ran the call after the caller's deadline by its own
// clock (backend.ErrPastDeadline): the caller's clock may lag the store's
// verdict by the clocks' uncertainty, and the call took nothing.
func callerDeadline(ctx context.Context, err error) error {
	if ended := contextEnded(ctx); ended != nil {
		return ended
	}
	if errors.Is(err, backend.ErrPastDeadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func heldError(held []KeyHeld, ctxErr error) *HeldError {
	return &HeldError{Key: held[0].Key, Remaining: held[0].Remaining, Keys: held, Err: ctxErr}
}

// shortest is the smallest known remaining TTL of the held keys; zero if
// any is unknown.
func shortest(held []KeyHeld) time.Duration {
	d := held[0].Remaining
	for _, h := range held[1:] {
		if h.Remaining <= 0 {
			return 0
		}
		d = min(d, h.Remaining)
	}
	return d
}

// try makes one attempt; it returns a lease when acquired. When the attempt
// fails, its outcome in the store is unknown (the reply may have been lost
// after the store ran it), so the token is released in the background.
// A sealed key is an answer, not a failure: nothing to release.
//
// The lease is made first, so that the token lives in its allocation; an
// attempt that fails drops it.
func (c *Client) try(ctx context.Context, t target, ttl time.Duration, unseal bool) (*lease, []KeyHeld, error) {
	l := &lease{client: c, target: t, ttl: ttl, parent: ctx}
	token := mintToken(&l.tokenBuf)
	l.token = token
	requested := time.Now() // the lease runs from before the request, not after
	a, err := t.tryAcquire(ctx, token, ttl, unseal)
	switch {
	case errors.Is(err, ErrSealed):
		if sealed := (*SealedError)(nil); c.seals != nil && errors.As(err, &sealed) {
			c.seals.remember(t.key, sealed.Note, requested)
		}
		return nil, nil, err
	case err != nil:
		c.forget(t, token, forgetUntil(err, requested, ttl))
		return nil, nil, err
	case !a.acquired:
		return nil, a.held, nil
	}
	l.fence, l.fences, l.since, l.expiresAt = a.fence, a.fences, requested, requested.Add(ttl)
	l.liftedSeal = a.liftedSeal
	return l, nil, nil
}

// outwaitSealMemory holds a lease that lifted a seal for SealMemory before
// handing it out: until then another Client may still answer from its
// memory that the key is sealed, and the holder is about to make that
// untrue. When ctx ends first, the lease is released and ctx's error
// returned.
func (c *Client) outwaitSealMemory(ctx context.Context, l *lease) error {
	if c.seals != nil {
		c.seals.forget(l.target.key)
	}
	t := time.NewTimer(SealMemory)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		_ = l.Release(context.WithoutCancel(ctx))
		return fmt.Errorf("lock: acquire %q: waiting out remembered seals: %w", l.target.key, ctx.Err())
	}
}

// unknownTTLRecheck is how soon a waiter looks again when the store reports no
// remaining TTL: the key is about to expire, or has no expiry at all (set by
// hand), where this is the only way to notice its deletion.
const unknownTTLRecheck = 100 * time.Millisecond

// recheckAfter is when a waiter tries again without a release message: just
// after the holder's TTL runs out (stores truncate it to whole milliseconds),
// and never after the wait's end.
func recheckAfter(remaining, left time.Duration) time.Duration {
	d := remaining + time.Millisecond
	if remaining <= 0 {
		d = unknownTTLRecheck
	}
	return min(d, left)
}
