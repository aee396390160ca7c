package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNoKeys reports an AcquireAll call without keys.
var ErrNoKeys = errors.New("lock: no keys")

// target is what a lease holds: one key of a Backend, or a set of keys of a
// MultiBackend taken in one atomic step. It maps each lease operation onto
// the store's primitive for it, so that waiting, the watchdog and the local
// expiry are written once for both.
type target struct {
	keys    []string // one key, or sorted and unique
	backend Backend
	multi   MultiBackend // set when len(keys) > 1 or the caller used AcquireAll
}

func singleTarget(b Backend, key string) target { return target{keys: []string{key}, backend: b} }

// multiTarget sorts and deduplicates keys: a fixed order is what keeps two
// overlapping sets from deadlocking in stores that lock row by row.
func multiTarget(b Backend, keys []string) (target, error) {
	if len(keys) == 0 {
		return target{}, ErrNoKeys
	}
	multi, ok := b.(MultiBackend)
	if !ok {
		return target{}, fmt.Errorf("lock: %T cannot take several keys at once: %w", b, errors.ErrUnsupported)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	return target{keys: slices.Compact(sorted), backend: b, multi: multi}, nil
}

func (t target) name() string {
	if len(t.keys) == 1 {
		return t.keys[0]
	}
	return fmt.Sprintf("%s (+%d keys)", t.keys[0], len(t.keys)-1)
}

// tryAcquire takes every key or none. held is set when another owner holds
// some key.
func (t target) tryAcquire(ctx context.Context, token string, ttl time.Duration) (fences []int64, held []KeyHeld, err error) {
	if t.multi == nil {
		g, err := t.backend.TryAcquire(ctx, t.keys[0], token, ttl)
		if err != nil || !g.Acquired {
			return nil, []KeyHeld{{Key: t.keys[0], Remaining: g.Remaining}}, err
		}
		return []int64{g.Fence}, nil, nil
	}
	g, err := t.multi.TryAcquireAll(ctx, t.keys, token, ttl)
	switch {
	case err != nil:
		return nil, nil, err
	case g.Acquired && len(g.Fences) != len(t.keys):
		return nil, nil, fmt.Errorf("lock: store gave %d fences for %d keys", len(g.Fences), len(t.keys))
	case g.Acquired:
		return g.Fences, nil, nil
	case len(g.Held) == 0:
		// Not acquired, yet nobody named: report every key as held
		// with an unknown TTL rather than an empty answer.
		for _, k := range t.keys {
			g.Held = append(g.Held, KeyHeld{Key: k})
		}
	}
	return nil, g.Held, nil
}

func (t target) extend(ctx context.Context, token string, ttl time.Duration) (bool, error) {
	if t.multi == nil {
		return t.backend.Extend(ctx, t.keys[0], token, ttl)
	}
	return t.multi.ExtendAll(ctx, t.keys, token, ttl)
}

// release deletes what token still holds; all reports whether that was
// every key.
func (t target) release(ctx context.Context, token string) (all bool, err error) {
	if t.multi == nil {
		return t.backend.Release(ctx, t.keys[0], token)
	}
	n, err := t.multi.ReleaseAll(ctx, t.keys, token)
	return n == len(t.keys), err
}

func (t target) holds(ctx context.Context, token string) (time.Duration, bool, error) {
	if t.multi != nil {
		return t.multi.HoldsAll(ctx, t.keys, token)
	}
	inspector, ok := t.backend.(Inspector)
	if !ok {
		return 0, false, fmt.Errorf("lock: %T cannot report a holder's TTL: %w", t.backend, errors.ErrUnsupported)
	}
	return inspector.Holds(ctx, t.keys[0], token)
}

// subscribe subscribes to the releases of every key, merged into one
// Subscription.
func (t target) subscribe(ctx context.Context) (Subscription, error) {
	if len(t.keys) == 1 {
		return t.backend.Subscribe(ctx, t.keys[0])
	}
	merged := &mergedSubscription{waker: NewWaker(nil), done: make(chan struct{})}
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
