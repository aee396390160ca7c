// Package lock is the DistributedLockPort of the design card: a named,
// expiring, owner-checked mutual-exclusion lock shared by many processes.
//
// The port is deliberately small. A Locker hands out at most one Lease per key
// at a time; a Lease expires on its own after its TTL, so a crashed holder
// never blocks a key for longer than that. Only the holder of a Lease can
// release it: releasing after the TTL ran out (or after the key was taken by
// someone else) deletes nothing and reports ErrNotHeld.
//
// Mutual exclusion is only as good as the TTL: a holder that pauses longer
// than its TTL (GC, a stalled network, a suspended VM) may still be working
// when a new holder acquires the key. Callers that write to a system of record
// must keep a final guard there (in this service, PostgreSQL's UNIQUE
// constraint on a seat's reservation).
package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Locker acquires leases on named locks.
type Locker interface {
	// Acquire tries once to take the lock named key for ttl and never waits.
	//
	// It returns a Lease on success. When another owner holds the key it
	// returns a *HeldError (errors.Is(err, ErrHeld)) that carries the
	// holder's remaining TTL. When the backing store cannot be reached it
	// returns an error wrapping ErrUnavailable. A ttl below one millisecond
	// is rejected with ErrInvalidTTL.
	Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, error)
}

// Lease is one holder's claim on a lock, valid until released or expired.
type Lease interface {
	// Key is the name of the lock this lease holds.
	Key() string
	// Release gives the lock up if this lease still owns it. It runs even
	// when ctx is already cancelled (bounded by its own short timeout), so a
	// request that was abandoned by its client still frees the seat. It
	// returns ErrNotHeld when the lease had expired or the key now belongs to
	// someone else (nothing is deleted then), and an error wrapping
	// ErrUnavailable when the store cannot be reached.
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
)

// HeldError is returned by Acquire when another owner holds the lock.
type HeldError struct {
	Key string
	// Remaining is the holder's remaining TTL as the store reported it at
	// the time of the attempt. It is zero if the store could not say (a key
	// without expiry, set by hand).
	Remaining time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("lock: %q held by another owner for %s", e.Key, e.Remaining)
}

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// ValidateTTL reports ErrInvalidTTL for a TTL that the stores cannot express.
func ValidateTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return ErrInvalidTTL
	}
	return nil
}
