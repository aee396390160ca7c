// Package lock is the DistributedLockPort of the design card: a named,
// expiring, owner-checked, fenced mutual-exclusion lock shared by many
// processes.
//
// Callers see two things: a Locker, which hands out at most one Lease per key
// at a time, and the Lease, which carries a fencing token, a context that is
// cancelled when the lease is lost, and Extend/Release. Client implements
// Locker on top of any Backend (Redis, Redis Cluster, PostgreSQL, memory);
// the adapters only provide a few atomic primitives, so waiting, watchdog,
// lease contexts and metrics behave the same on every store.
//
// Mutual exclusion is only as good as the lease: a holder that pauses longer
// than its TTL (GC, a stalled network, a suspended VM) may still be working
// when a new holder acquires the key, and a Redis failover can forget a
// lock. Writers must therefore pass the lease's Fence to the system of record
// and have it refuse a fence lower than one it has already seen (this
// service does so in PostgreSQL, next to the UNIQUE constraint on a seat).
package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Locker acquires leases on named locks.
type Locker interface {
	// Acquire takes the lock named key.
	//
	// With opts.Wait zero it tries once and never waits. Otherwise it
	// waits up to opts.Wait (capped by the Client's MaxWait) for the holder
	// to release, woken by the release itself, not by polling. When the lock
	// stays held it returns a *HeldError (errors.Is(err, ErrHeld)) with the
	// holder's remaining TTL. A store that cannot be reached gives an error
	// wrapping ErrUnavailable; a cancelled ctx gives ctx's error.
	Acquire(ctx context.Context, key string, opts Options) (Lease, error)
}

// Options say how long to hold and how long to wait.
type Options struct {
	// TTL is the lease: the longest a crashed holder blocks the key. Zero
	// means "until released": the lease starts at the Client's WatchdogTTL
	// and a watchdog extends it every third of that while the process
	// lives.
	TTL time.Duration
	// Wait is how long Acquire may wait for a held lock. Zero fails fast.
	Wait time.Duration
}

// Lease is one holder's claim on a lock, valid until released, lost or
// expired.
type Lease interface {
	// Key is the name of the lock.
	Key() string
	// Fence is the fencing token minted with this acquisition: strictly
	// greater than the token of every earlier acquisition of the same key,
	// even across a store restart that lost its data.
	Fence() int64
	// Context is cancelled when the lease ends: released, expired (fixed
	// TTL), or found lost by the watchdog or by Extend. context.Cause then
	// says which (ErrReleased or ErrLeaseLost). Work done under the lock
	// should use it so that it aborts before committing once the lock is
	// gone.
	Context() context.Context
	// Extend resets the lease to ttl if it is still ours; ErrNotHeld
	// otherwise (and the lease's Context is cancelled).
	Extend(ctx context.Context, ttl time.Duration) error
	// Release gives the lock up if this lease still owns it and wakes
	// waiters. It runs even when ctx is already cancelled (bounded by its
	// own short timeout), so an abandoned request still frees the key. It
	// returns ErrNotHeld when the lease had expired or the key belongs to
	// someone else (nothing is deleted then). Releasing twice is ErrNotHeld.
	Release(ctx context.Context) error
}

var (
	// ErrHeld reports that another owner holds the lock.
	ErrHeld = errors.New("lock: held by another owner")
	// ErrNotHeld reports that a lease no longer owns its lock.
	ErrNotHeld = errors.New("lock: not held")
	// ErrUnavailable reports that the lock store could not be reached.
	ErrUnavailable = errors.New("lock: store unavailable")
	// ErrInvalidTTL reports a TTL too small to be meaningful.
	ErrInvalidTTL = errors.New("lock: ttl must be at least 1ms")
	// ErrLeaseLost is the cause of a lease context cancelled because the
	// lock was lost: its TTL ran out, or it was deleted or taken behind the
	// holder's back.
	ErrLeaseLost = errors.New("lock: lease lost")
	// ErrReleased is the cause of a lease context cancelled by Release.
	ErrReleased = errors.New("lock: lease released")
)

// HeldError is returned by Acquire when another owner holds the lock.
type HeldError struct {
	Key string
	// Remaining is the holder's remaining TTL as the store reported it at
	// the last attempt. Zero if the store could not say (a key without
	// expiry, set by hand).
	Remaining time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lock: %q held by another owner for %s", e.Key, e.Remaining)
}

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ValidateTTL reports ErrInvalidTTL for a TTL that stores cannot express.
func ValidateTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return ErrInvalidTTL
	}
	return nil
}
