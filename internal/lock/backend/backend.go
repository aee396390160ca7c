// Package backend is the adapter side of the lock port, as database/sql/driver
// is to database/sql: what a lock store implements so that lock.Client can
// build waiting, watchdogs, lease contexts, sealing and metrics on it, the
// same on every store. Callers of the port never need this package; adapter
// authors implement Backend (and, where their store can, the optional
// Sealer, Inspector and MultiBackend) and run lock/locktest against it.
package backend

import (
	"context"
	"errors"
	"time"
)

// ErrUnavailable reports that the lock store could not be reached. Every
// method of a Backend wraps such a failure with it; lock.ErrUnavailable is
// the same value.
var ErrUnavailable = errors.New("lock: store unavailable")

// ErrPastDeadline marks, beside ErrUnavailable, an acquire the store ran
// after its caller's deadline (by the store's clock) and that took
// nothing: the caller's wait is over by the store's account, even when
// the caller's own clock has not quite reached the deadline yet. Client
// reports it as the caller's deadline, never as an outage.
var ErrPastDeadline = errors.New("ran after its caller's deadline, took nothing")

// Backend is what a store adapter implements: the atomic primitives on one
// lock store. Each method wraps a failure to reach the store with
// ErrUnavailable.
type Backend interface {
	// TryAcquire takes key for token for ttl if nobody holds it and, in
	// the same atomic step, mints a fencing token strictly greater than
	// every earlier one for key. When the key is held it reports the
	// holder's remaining TTL instead.
	TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (Grant, error)
	// Extend sets key's TTL to ttl if token still holds it; false if not.
	Extend(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
	// Release deletes key if token still holds it and wakes the
	// subscribers of key; false if token did not hold it.
	Release(ctx context.Context, key, token string) (bool, error)
	// Subscribe returns a subscription to key's releases. It returns once
	// the store confirmed the subscription, so a release that happens
	// after Subscribe returned is never missed (one that happens during
	// the call may be; Client re-checks at the holder's TTL).
	Subscribe(ctx context.Context, key string) (Subscription, error)
}

// Grant is the outcome of TryAcquire.
type Grant struct {
	Acquired bool
	// Fence is the new fencing token when Acquired.
	Fence int64
	// Remaining is the holder's remaining TTL when not Acquired; zero if
	// unknown.
	Remaining time.Duration
	// Sealed reports a key sealed by a Sealer: not Acquired from
	// TryAcquire; with Acquired from Sealer.TryAcquireSealed, the seal it
	// lifted.
	Sealed bool
	// Note is the sealed key's note (Sealer.SealWithNote) when Sealed and
	// not Acquired; empty for a seal made without one.
	Note string
}

// Sealer is implemented by backends that can seal a key (see lock.Sealer):
// replace a holder's token with a seal that refuses every TryAcquire, in
// one atomic step, keeping a short note that TryAcquire reports in
// Grant.Note in the same atomic step that finds the key sealed
// (Grant.Sealed).
type Sealer interface {
	// Seal replaces token's hold on key with the seal for ttl and wakes
	// key's subscribers; false, and nothing changed, if token did not
	// hold key.
	Seal(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
	// SealWithNote is Seal whose seal keeps note; Seal is SealWithNote
	// with an empty note.
	SealWithNote(ctx context.Context, key, token string, ttl time.Duration, note string) (bool, error)
	// TryAcquireSealed is TryAcquire that also takes a sealed key, as if
	// it were free, reporting Grant.Sealed (with Acquired) when it did.
	TryAcquireSealed(ctx context.Context, key, token string, ttl time.Duration) (Grant, error)
}

// Subscription delivers release notifications of one key.
type Subscription interface {
	// Released receives a value after each release of the key (several
	// releases may coalesce into one value).
	Released() <-chan struct{}
	// Close ends the subscription.
	Close()
}

// Inspector is implemented by backends that can tell a holder, in one
// owner-checked call, whether it still holds key and for how long.
type Inspector interface {
	// Holds reports key's remaining TTL in the store if token holds it;
	// held is false when the key is free, expired or someone else's.
	// Remaining is zero for a key held with no expiry.
	Holds(ctx context.Context, key, token string) (remaining time.Duration, held bool, err error)
}

// MultiBackend is implemented by backends that take several keys in one
// atomic step: all of them or none, never a part. Keys come sorted and
// without duplicates. Every method is idempotent per token, like
// Backend's.
type MultiBackend interface {
	// TryAcquireAll takes every key for token for ttl if none is held by
	// another owner (keys token already holds count as free: a retried
	// call succeeds with the fences of the first), minting one fence per
	// key as TryAcquire does. Otherwise it takes none and reports the
	// keys held by others.
	TryAcquireAll(ctx context.Context, keys []string, token string, ttl time.Duration) (MultiGrant, error)
	// ExtendAll sets the TTL of the keys token still holds to ttl and
	// reports whether it held all of them.
	ExtendAll(ctx context.Context, keys []string, token string, ttl time.Duration) (bool, error)
	// ReleaseAll deletes the keys token still holds, waking their
	// subscribers, and reports how many it deleted.
	ReleaseAll(ctx context.Context, keys []string, token string) (int, error)
	// HoldsAll reports the smallest remaining TTL of keys if token holds
	// all of them; held is false otherwise.
	HoldsAll(ctx context.Context, keys []string, token string) (remaining time.Duration, held bool, err error)
}

// MultiGrant is the outcome of TryAcquireAll.
type MultiGrant struct {
	Acquired bool
	// Fences are the new fencing tokens when Acquired, in the order of
	// the keys.
	Fences []int64
	// Held lists the keys held by other owners when not Acquired.
	Held []KeyHeld
}

// KeyHeld is one key found held by another owner.
type KeyHeld struct {
	Key string
	// Remaining is the holder's remaining TTL; zero if unknown.
	Remaining time.Duration
}

// UncertainError is a failed acquisition (TryAcquire, TryAcquireSealed,
// TryAcquireAll) whose outcome is unknown, from a backend that knows the
// latest instant, on the local clock, at which the store can still have
// granted it: the store refuses an acquisition it runs later (Redis: a
// deadline in the server's own clock, see redislock). lock.Client keeps
// releasing the attempt's token in the background until By plus the TTL,
// when a grant made at By would have expired, rather than until the
// request plus the TTL. An error without one means the grant may come at
// any time (a store stalled with the request queued); the client then
// stops at the request plus the TTL.
type UncertainError struct {
	Err error
	By  time.Time
}

func (e *UncertainError) Error() string { return e.Err.Error() }
func (e *UncertainError) Unwrap() error { return e.Err }
