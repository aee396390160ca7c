package lock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
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
	// ReleaseTimeout bounds a Release, independent of the caller's context.
	ReleaseTimeout time.Duration
	// Observer receives metrics; nil discards them.
	Observer Observer
	// Logger receives watchdog failures; nil discards them.
	Logger *slog.Logger
}

// Client implements Locker on a Backend.
type Client struct {
	backend        Backend
	maxWait        time.Duration
	watchdogTTL    time.Duration
	releaseTimeout time.Duration
	observer       Observer
	log            *slog.Logger
}

var _ Locker = (*Client)(nil)

// New returns a Client that takes locks in backend.
func New(backend Backend, cfg Config) *Client {
	c := &Client{
		backend:        backend,
		maxWait:        or(cfg.MaxWait, DefaultMaxWait),
		watchdogTTL:    or(cfg.WatchdogTTL, DefaultWatchdogTTL),
		releaseTimeout: or(cfg.ReleaseTimeout, DefaultReleaseTimeout),
		observer:       cfg.Observer,
		log:            cfg.Logger,
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
	ttl, watchdog := opts.TTL, opts.TTL == 0
	if watchdog {
		ttl = c.watchdogTTL
	}
	if err := ValidateTTL(ttl); err != nil {
		return nil, err
	}
	start := time.Now()
	lease, err := c.acquire(ctx, key, ttl, min(opts.Wait, c.maxWait))
	waited := time.Since(start)
	switch {
	case err == nil:
		c.observer.Acquire(OutcomeAcquired, waitedIf(opts.Wait, waited))
		lease.start(watchdog)
		return lease, nil
	case errors.Is(err, ErrHeld):
		c.observer.Acquire(OutcomeHeld, waitedIf(opts.Wait, waited))
	default:
		c.observer.Acquire(OutcomeError, waitedIf(opts.Wait, waited))
	}
	return nil, err
}

func waitedIf(wait, waited time.Duration) time.Duration {
	if wait <= 0 {
		return 0
	}
	return waited
}

// acquire tries once, then, if allowed to wait, subscribes to the key's
// releases and tries again after each release — or when the holder's TTL
// runs out, so that a holder that died (no release message) or a message
// that was missed never strands a waiter.
func (c *Client) acquire(ctx context.Context, key string, ttl, wait time.Duration) (*lease, error) {
	deadline := time.Now().Add(wait)
	l, grant, err := c.try(ctx, key, ttl)
	if err != nil || l != nil {
		return l, err
	}
	if wait <= 0 {
		return nil, &HeldError{Key: key, Remaining: grant.Remaining}
	}
	// The subscription must be confirmed within the wait, or we give up
	// as if the lock had stayed held.
	subCtx, cancel := context.WithDeadline(ctx, deadline)
	sub, err := c.backend.Subscribe(subCtx, key)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, &HeldError{Key: key, Remaining: grant.Remaining}
		}
		return nil, fmt.Errorf("lock: wait for %q: %w", key, err)
	}
	defer sub.Close()
	for {
		// Try again now that we are subscribed: the holder may have
		// released between the first try and the subscription.
		l, grant, err = c.try(ctx, key, ttl)
		if err != nil || l != nil {
			return l, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, &HeldError{Key: key, Remaining: grant.Remaining}
		}
		recheck := recheckAfter(grant.Remaining, left)
		timer := time.NewTimer(recheck)
		select {
		case <-sub.Released():
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
		timer.Stop()
	}
}

// try makes one TryAcquire; it returns a lease when acquired.
func (c *Client) try(ctx context.Context, key string, ttl time.Duration) (*lease, Grant, error) {
	token := NewToken()
	requested := time.Now() // the lease runs from before the request, not after
	grant, err := c.backend.TryAcquire(ctx, key, token, ttl)
	if err != nil {
		return nil, Grant{}, err
	}
	if !grant.Acquired {
		return nil, grant, nil
	}
	return newLease(ctx, c, key, token, grant.Fence, ttl, requested), grant, nil
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
