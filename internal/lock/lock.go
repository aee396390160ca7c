// Package lock is a distributed lock port: a named,
// expiring, owner-checked, fenced mutual-exclusion lock shared by many
// processes.
//
// Callers see two things: a Locker, which hands out at most one Lease per key
// at a time, and the Lease, which carries a fencing token, a context that is
// cancelled when the lease is lost, and Extend/Release. Client implements
// Locker on top of any store adapter (Redis, Redis Cluster, PostgreSQL,
// memory); the adapters implement the few atomic primitives of package
// lock/backend, so waiting, watchdog, lease contexts and metrics behave the
// same on every store. A lease whose store can seal a key also implements
// Sealer.
//
// Mutual exclusion is only as good as the lease: a holder that pauses longer
// than its TTL (GC, a stalled network, a suspended VM) may still be working
// when a new holder acquires the key, and a Redis failover can forget a
// lock. Writers must therefore pass the lease's Fence to the system of record
// and have it refuse a fence lower than one it has already seen (in the
// same transaction as the write the lock guards, next to whatever
// constraint has the last word there).
package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Locker acquires leases on named locks.
type Locker interface {
	// Acquire takes the lock named key.
	//
	// With opts.Wait zero it tries once and never waits. Otherwise it
	// waits up to opts.Wait (capped by the Client's MaxWait) for the holder
	// to release, woken by the release itself, not by polling. When the lock
	// stays held it returns a *HeldError (errors.Is(err, ErrHeld)) with the
	// holder's remaining TTL.
	//
	// ctx bounds the acquiring and the waiting, never the lease it grants:
	// a lease lives until it is released, lost or expired, whatever
	// becomes of ctx (see Lease.Context). When ctx ends while waiting for
	// a holder, the error is a *HeldError whose Err is ctx's error (so
	// errors.Is(err, context.DeadlineExceeded) holds too). An already
	// ended ctx returns its error at once without touching the store. A
	// store that cannot be reached gives an error wrapping ErrUnavailable.
	// When an attempt's outcome is unknown (its reply was lost), its token
	// is released in the background until the store answers, or until its
	// TTL ends.
	Acquire(ctx context.Context, key string, opts Options) (Lease, error)
}

// MultiLocker acquires several keys as one lease: all of them or none.
type MultiLocker interface {
	// AcquireAll takes every key, or none, in one atomic step of the
	// store; Options and errors are Acquire's. A *HeldError lists in Keys
	// every key that another owner held, with its remaining TTL. A store
	// that cannot take several keys at once gives an error wrapping
	// errors.ErrUnsupported; ErrNoKeys when keys is empty.
	AcquireAll(ctx context.Context, keys []string, opts Options) (MultiLease, error)
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
	// Unseal takes the key even when it is sealed (see Sealer), as
	// if it were free: the way to undo, under the lock, what the seal
	// stands for. The lease's Release then leaves the key free, its Seal
	// seals it again. A key held by another owner is still refused.
	Unseal bool
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
	// Context is cancelled when the lease ends: released, expired, or
	// found lost by the watchdog or by Extend. context.Cause then says
	// which (ErrReleased or ErrLeaseLost). It does not end with the
	// context given to Acquire: combine the two with Join. Its Deadline is
	// the local expiry of a fixed-TTL lease (moved by Extend); a watchdog
	// lease has none.
	//
	// Every lease expires locally no later than the store lets the key
	// go: its TTL after the start of the acquire or of the last successful
	// extension.
	Context() context.Context
	// Remaining asks the store, in one owner-checked call, how long this
	// lease still holds its lock; ErrNotHeld when it no longer does (the
	// Context is then cancelled). A store that cannot tell gives an error
	// wrapping errors.ErrUnsupported.
	Remaining(ctx context.Context) (time.Duration, error)
	// Extend resets the lease to ttl if it is still ours; ErrNotHeld
	// otherwise (and the lease's Context is cancelled). The call is cut
	// off at the lease's local expiry. A store that grants the extension
	// after that expiry, when the lease was already declared lost, has
	// its key released again and Extend still returns ErrNotHeld.
	Extend(ctx context.Context, ttl time.Duration) error
	// Release gives the lock up if this lease still owns it and wakes
	// waiters. It runs even when ctx is already cancelled (bounded by its
	// own short timeout), so an abandoned request still frees the key. It
	// returns ErrNotHeld when the lease had expired or the key belongs to
	// someone else (nothing is deleted then). Releasing twice is ErrNotHeld.
	Release(ctx context.Context) error
}

// Sealer is the optional capability of a Lease whose lock can be sealed,
// discovered by type assertion as http.Flusher is: the leases of a Client
// implement it.
type Sealer interface {
	// Seal ends the lease as Release does, but in the same atomic step
	// leaves the key sealed for ttl: the work the lock guards is done for
	// good (say, the item it guards was sold), and every Acquire of the
	// key answers ErrSealed at once, without waiting, until the seal
	// expires or an Acquire with Options.Unseal takes the key. Waiters
	// are woken and get ErrSealed. A seal is a shortcut in front of the
	// system of record, never its replacement: it may be lost (a store
	// that forgets keys), and a store that cannot seal (its backend is
	// not a backend.Sealer) simply releases the key. ErrNotHeld, and
	// nothing sealed, when the lease no longer held its lock.
	Seal(ctx context.Context, ttl time.Duration) error
	// SealWithNote is Seal whose seal keeps note: a few bytes chosen by
	// the sealer that every Acquire refused by the seal gets back in
	// SealedError.Note, in the same store call (Seal is SealWithNote with
	// an empty note). The note is stored as it is, readable by anyone who
	// can read the store: make it short (a few dozen bytes at most) and
	// never a secret nor personal data as such (a digest of it, say).
	SealWithNote(ctx context.Context, ttl time.Duration, note string) error
}

// MultiLease is a claim on several keys taken together by AcquireAll. It
// behaves as a Lease on all of them at once: one Context, one local expiry,
// Extend and Release each one call to the store, and losing any key loses
// the lease.
type MultiLease interface {
	// Keys are the lease's keys, sorted and without duplicates.
	Keys() []string
	// Fences are the fencing tokens of Keys, in the same order.
	Fences() []int64
	// Context, Remaining (the shortest of the keys), Extend and Release
	// are Lease's.
	Context() context.Context
	Remaining(ctx context.Context) (time.Duration, error)
	Extend(ctx context.Context, ttl time.Duration) error
	Release(ctx context.Context) error
}

var (
	// ErrHeld reports that another owner holds the lock.
	ErrHeld = errors.New("lock: held by another owner")
	// ErrNotHeld reports that a lease no longer owns its lock.
	ErrNotHeld = errors.New("lock: not held")
	// ErrUnavailable reports that the lock store could not be reached
	// (the value adapters wrap, backend.ErrUnavailable).
	ErrUnavailable = backend.ErrUnavailable
	// ErrInvalidTTL reports a TTL too small to be meaningful.
	ErrInvalidTTL = errors.New("lock: ttl must be at least 1ms")
	// ErrLeaseLost is the cause of a lease context cancelled because the
	// lock was lost: its TTL ran out, or it was deleted or taken behind the
	// holder's back.
	ErrLeaseLost = errors.New("lock: lease lost")
	// ErrReleased is the cause of a lease context cancelled by Release.
	ErrReleased = errors.New("lock: lease released")
	// ErrSealed reports that Acquire found the key sealed by Sealer.Seal:
	// the work the lock guards is done, there is nothing to wait for.
	ErrSealed = errors.New("lock: sealed")
)

// HeldError is returned by Acquire when another owner holds the lock.
type HeldError struct {
	// Key is the lock found held (for AcquireAll, the first of them).
	Key string
	// Remaining is the holder's remaining TTL as the store reported it at
	// the last attempt. Zero if the store could not say (a key without
	// expiry, set by hand).
	Remaining time.Duration
	// Keys lists, for AcquireAll, every key found held with its holder's
	// remaining TTL; for Acquire, the one key.
	Keys []KeyHeld
	// Err is the caller's context error when the context ended while
	// waiting for the holder (errors.Is(err, context.DeadlineExceeded)
	// then holds as well); nil when the wait itself ran out.
	Err error
}

func (e *HeldError) Error() string {
	msg := fmt.Sprintf("lock: %q held by another owner for %s", e.Key, e.Remaining)
	if len(e.Keys) > 1 {
		msg += fmt.Sprintf(" (%d keys held)", len(e.Keys))
	}
	if e.Err != nil {
		msg += ": wait ended: " + e.Err.Error()
	}
	return msg
}

// Is makes errors.Is(err, ErrHeld) true for a *HeldError.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Unwrap gives the caller's context error, if the wait was cut short by it.
func (e *HeldError) Unwrap() error { return e.Err }

// KeyHeld is one key found held by another owner: its Key and the
// holder's Remaining TTL (zero if unknown), as the backend reported it.
type KeyHeld = backend.KeyHeld

// SealedError is returned by Acquire for a sealed key
// (errors.Is(err, ErrSealed)). A Client that remembers seals answers every
// Acquire of a remembered key with the same *SealedError: read it, do not
// change it.
type SealedError struct {
	Key string
	// Note is the note the seal was made with (Sealer.SealWithNote);
	// empty for a seal made by Seal, or by a writer that sealed the key
	// without one.
	Note string
}

func (e *SealedError) Error() string { return fmt.Sprintf("lock: %q is sealed", e.Key) }

// Is makes errors.Is(err, ErrSealed) true for a *SealedError.
func (e *SealedError) Is(target error) bool { return target == ErrSealed }

// ValidateTTL reports ErrInvalidTTL for a TTL that stores cannot express.
func validateTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return ErrInvalidTTL
	}
	return nil
}
