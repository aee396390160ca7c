package lock

import (
	"context"
	"errors"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Backoff of the background release after an acquire of unknown outcome.
const (
	forgetFirstRetry = 20 * time.Millisecond
	forgetMaxRetry   = time.Second
)

// forget releases token in the background after an acquire whose outcome
// is unknown: the store may have granted the lock and lost only the reply,
// which would leave the key held by a token nobody will release until its
// TTL. Release is owner-checked, so when the acquire did not happen this
// deletes nothing.
//
// A "not held" answer does not end it: the acquire may still be on its way
// (sent on a connection the client gave up on, queued in a stalled server)
// and run after the release did. So it keeps releasing, with backoff, until
// a release deletes the key or the attempt's TTL has passed, when the store
// drops the key by itself anyway (forgetUntil: counted from the latest
// instant the store can still grant the attempt, when the backend knows it).
func (c *Client) forget(t target, token string, expires time.Time) {
	c.forgetting.Go(func() {
		backoff := forgetFirstRetry
		for {
			left := time.Until(expires)
			if left <= 0 {
				return
			}
			ctx, cancel := context.WithTimeout(c.closing, min(c.releaseTimeout, left))
			released, err := t.release(ctx, token)
			cancel()
			if err == nil && released {
				return
			}
			select {
			case <-time.After(min(backoff, time.Until(expires))):
			case <-c.closing.Done():
				return
			}
			backoff = min(2*backoff, forgetMaxRetry)
		}
	})
}

// forgetUntil is when the background release of a failed attempt, requested
// at requested, may stop: once a grant would have expired. A backend that
// reports the latest instant at which the store can still grant the attempt
// (backend.UncertainError) makes that instant plus ttl, when later: the
// store may run a delayed acquire up to then, and its key lives ttl from
// there, not from the request.
func forgetUntil(err error, requested time.Time, ttl time.Duration) time.Time {
	until := requested.Add(ttl)
	var uncertain *backend.UncertainError
	if errors.As(err, &uncertain) && uncertain.By.Add(ttl).After(until) {
		until = uncertain.By.Add(ttl)
	}
	return until
}

// Close stops the background releases of acquisitions whose outcome was
// unknown, cancelling any in flight, and waits for them; the keys they had
// not yet freed expire at their TTL. Leases already granted are not
// affected: release them first. Close is idempotent.
func (c *Client) Close() {
	c.cancelClosing()
	c.forgetting.Wait()
}
