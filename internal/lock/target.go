package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// ErrNoKeys reports an AcquireAll call without keys.
var ErrNoKeys = errors.New("lock: no keys")

// target is what a lease holds: one key of a Backend, or a set of keys of a
// MultiBackend taken in one atomic step. It maps each lease operation onto
// the store's primitive for it, so that waiting, the watchdog and the local
// expiry are written once for both.
type target struct {
	key     string   // the key, or the first of keys
	keys    []string // AcquireAll's keys, sorted and unique; nil for one key
	backend backend.Backend
	multi   backend.MultiBackend // set for AcquireAll
}

func singleTarget(b backend.Backend, key string) target { return target{key: key, backend: b} }

// multiTarget sorts and deduplicates keys: a fixed order is what keeps two
// overlapping sets from deadlocking in stores that lock row by row.
func multiTarget(b backend.Backend, keys []string) (target, error) {
	if len(keys) == 0 {
		return target{}, ErrNoKeys
	}
	multi, ok := b.(backend.MultiBackend)
	if !ok {
		return target{}, fmt.Errorf("lock: %T cannot take several keys at once: %w", b, errors.ErrUnsupported)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	return target{key: sorted[0], keys: sorted, backend: b, multi: multi}, nil
}

// allKeys lists the target's keys.
func (t target) allKeys() []string {
	if t.keys == nil {
		return []string{t.key}
	}
	return slices.Clone(t.keys)
}

func (t target) name() string {
	if len(t.keys) <= 1 {
		return t.key
	}
	return fmt.Sprintf("%s (+%d keys)", t.key, len(t.keys)-1)
}

// attempt is the outcome of one tryAcquire.
type attempt struct {
	acquired   bool
	fence      int64   // the key's, or the first key's
	fences     []int64 // AcquireAll's; nil for one key
	held       []KeyHeld
	liftedSeal bool // acquired with unseal, and the key was sealed
}

// tryAcquire takes every key or none. held is set when another owner holds
// some key; the error is a *SealedError, with the seal's note, when the
// (single) key is sealed, unless unseal asks to take it anyway.
func (t target) tryAcquire(ctx context.Context, token string, ttl time.Duration, unseal bool) (attempt, error) {
	if t.multi == nil {
		var (
			g   backend.Grant
			err error
		)
		sealer, canSeal := t.backend.(backend.Sealer)
		if unseal && canSeal {
			g, err = sealer.TryAcquireSealed(ctx, t.key, token, ttl)
		} else {
			g, err = t.backend.TryAcquire(ctx, t.key, token, ttl)
		}
		switch {
		case err != nil:
			return attempt{}, err
		case g.Acquired:
			return attempt{acquired: true, fence: g.Fence, liftedSeal: g.Sealed}, nil
		case g.Sealed:
			return attempt{}, &SealedError{Key: t.key, Note: g.Note}
		}
		return attempt{held: []KeyHeld{{Key: t.key, Remaining: g.Remaining}}}, nil
	}
	g, err := t.multi.TryAcquireAll(ctx, t.keys, token, ttl)
	switch {
	case err != nil:
		return attempt{}, err
	case g.Acquired && len(g.Fences) != len(t.keys):
		return attempt{}, fmt.Errorf("lock: store gave %d fences for %d keys", len(g.Fences), len(t.keys))
	case g.Acquired:
		return attempt{acquired: true, fence: g.Fences[0], fences: g.Fences}, nil
	case len(g.Held) == 0:
		// Not acquired, yet nobody named: report every key as held
		// with an unknown TTL rather than an empty answer.
		for _, k := range t.keys {
			g.Held = append(g.Held, KeyHeld{Key: k})
		}
	}
	return attempt{held: g.Held}, nil
}

func (t target) extend(ctx context.Context, token string, ttl time.Duration) (bool, error) {
	if t.multi == nil {
		return t.backend.Extend(ctx, t.key, token, ttl)
	}
	return t.multi.ExtendAll(ctx, t.keys, token, ttl)
}

// release deletes what token still holds; all reports whether that was
// every key.
func (t target) release(ctx context.Context, token string) (all bool, err error) {
	if t.multi == nil {
		return t.backend.Release(ctx, t.key, token)
	}
	n, err := t.multi.ReleaseAll(ctx, t.keys, token)
	return n == len(t.keys), err
}

// seal seals the key token holds, with note; a backend that cannot seal,
// and a set of keys, are released instead (a seal only ever saves work).
func (t target) seal(ctx context.Context, token string, ttl time.Duration, note string) (bool, error) {
	if t.multi != nil {
		return t.release(ctx, token)
	}
	if sealer, ok := t.backend.(backend.Sealer); ok {
		return sealer.SealWithNote(ctx, t.key, token, ttl, note)
	}
	return t.release(ctx, token)
}

func (t target) holds(ctx context.Context, token string) (time.Duration, bool, error) {
	if t.multi != nil {
		return t.multi.HoldsAll(ctx, t.keys, token)
	}
	inspector, ok := t.backend.(backend.Inspector)
	if !ok {
		return 0, false, fmt.Errorf("lock: %T cannot report a holder's TTL: %w", t.backend, errors.ErrUnsupported)
	}
	return inspector.Holds(ctx, t.key, token)
}

// subscribe subscribes to the releases of every key, merged into one
// Subscription.
func (t target) subscribe(ctx context.Context) (backend.Subscription, error) {
	if len(t.keys) <= 1 {
		return t.backend.Subscribe(ctx, t.key)
	}
	merged := &mergedSubscription{waker: backend.NewWaker(nil), done: make(chan struct{})}
	for _, k := range t.keys {
		sub, err := t.backend.Subscribe(ctx, k)
		if err != nil {
			merged.Close()
			return nil, err
		}
		merged.subs = append(merged.subs, sub)
	}
	for _, sub := range merged.subs {
		merged.forwarders.Go(func() {
			for {
				select {
				case <-sub.Released():
					merged.waker.Wake()
				case <-merged.done:
					return
				}
			}
		})
	}
	return merged, nil
}
