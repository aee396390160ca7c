// Package memlock is an in-process backend.Backend: for unit tests and for
// running the service's logic without a store. It gives the same guarantees
// as the other adapters within one process, and none across processes.
package memlock

import (
	"context"
	"sync"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Backend keeps locks in memory. The zero value is not usable; call New.
type Backend struct {
	mu      sync.Mutex
	now     func() time.Time
	locks   map[string]entry
	fences  map[string]int64
	waiters backend.Waiters
}

type entry struct {
	token   string // empty when sealed
	fence   int64
	expires time.Time
	sealed  bool
	note    string // the seal's note
}

var (
	_ backend.Backend      = (*Backend)(nil)
	_ backend.Inspector    = (*Backend)(nil)
	_ backend.MultiBackend = (*Backend)(nil)
	_ backend.Sealer       = (*Backend)(nil)
)

// New returns an empty Backend.
func New() *Backend {
	return &Backend{now: time.Now, locks: map[string]entry{}, fences: map[string]int64{}}
}

// holder returns the live entry of key; callers hold mu.
func (b *Backend) holder(key string) (entry, bool) {
	e, ok := b.locks[key]
	if ok && !b.now().Before(e.expires) {
		delete(b.locks, key)
		return entry{}, false
	}
	return e, ok
}

// foreign reports the remaining TTL of key if someone other than token
// holds it; callers hold mu.
func (b *Backend) foreign(key, token string) (time.Duration, bool) {
	e, held := b.holder(key)
	if !held || e.token == token {
		return 0, false
	}
	return e.expires.Sub(b.now()), true
}

// take gives key to token for ttl. A token that holds key already keeps its
// fence (a retried acquire); otherwise a new fence is minted. Callers hold
// mu and have checked that no one else holds key.
func (b *Backend) take(key, token string, ttl time.Duration) int64 {
	if e, held := b.holder(key); held && e.token == token {
		b.locks[key] = entry{token: token, fence: e.fence, expires: b.now().Add(ttl)}
		return e.fence
	}
	if b.fences[key] == 0 {
		// Start from the clock, as the Redis adapter does, so fences stay
		// comparable when a deployment switches stores.
		b.fences[key] = b.now().UnixMicro()
	}
	b.fences[key]++
	b.locks[key] = entry{token: token, fence: b.fences[key], expires: b.now().Add(ttl)}
	return b.fences[key]
}

// TryAcquire implements backend.Backend. Re-running it with the token that
// holds key succeeds with the same fence.
func (b *Backend) TryAcquire(_ context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, held := b.holder(key); held && e.sealed {
		return backend.Grant{Sealed: true, Note: e.note}, nil
	}
	if remaining, held := b.foreign(key, token); held {
		return backend.Grant{Remaining: remaining}, nil
	}
	return backend.Grant{Acquired: true, Fence: b.take(key, token, ttl)}, nil
}

// TryAcquireSealed implements backend.Sealer.
func (b *Backend) TryAcquireSealed(_ context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, held := b.holder(key)
	lifted := held && e.sealed
	if lifted {
		delete(b.locks, key)
	}
	if remaining, held := b.foreign(key, token); held {
		return backend.Grant{Remaining: remaining}, nil
	}
	return backend.Grant{Acquired: true, Fence: b.take(key, token, ttl), Sealed: lifted}, nil
}

// Seal implements backend.Sealer.
func (b *Backend) Seal(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	return b.SealWithNote(ctx, key, token, ttl, "")
}

// SealWithNote implements backend.Sealer.
func (b *Backend) SealWithNote(_ context.Context, key, token string, ttl time.Duration, note string) (bool, error) {
	b.mu.Lock()
	_, ok := b.owned(key, token)
	if ok {
		b.locks[key] = entry{sealed: true, note: note, expires: b.now().Add(ttl)}
	}
	b.mu.Unlock()
	if ok {
		b.waiters.Wake(key)
	}
	return ok, nil
}

// TryAcquireAll implements backend.MultiBackend.
func (b *Backend) TryAcquireAll(_ context.Context, keys []string, token string, ttl time.Duration) (backend.MultiGrant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var held []backend.KeyHeld
	for _, k := range keys {
		if remaining, ok := b.foreign(k, token); ok {
			held = append(held, backend.KeyHeld{Key: k, Remaining: remaining})
		}
	}
	if held != nil {
		return backend.MultiGrant{Held: held}, nil
	}
	fences := make([]int64, len(keys))
	for i, k := range keys {
		fences[i] = b.take(k, token, ttl)
	}
	return backend.MultiGrant{Acquired: true, Fences: fences}, nil
}

// owned reports whether token holds key; callers hold mu.
func (b *Backend) owned(key, token string) (entry, bool) {
	e, held := b.holder(key)
	return e, held && !e.sealed && e.token == token
}

// Extend implements backend.Backend.
func (b *Backend) Extend(_ context.Context, key, token string, ttl time.Duration) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.owned(key, token)
	if ok {
		e.expires = b.now().Add(ttl)
		b.locks[key] = e
	}
	return ok, nil
}

// ExtendAll implements backend.MultiBackend.
func (b *Backend) ExtendAll(ctx context.Context, keys []string, token string, ttl time.Duration) (bool, error) {
	all := true
	for _, k := range keys {
		ok, _ := b.Extend(ctx, k, token, ttl)
		all = all && ok
	}
	return all, nil
}

// Release implements backend.Backend.
func (b *Backend) Release(_ context.Context, key, token string) (bool, error) {
	b.mu.Lock()
	_, ok := b.owned(key, token)
	if ok {
		delete(b.locks, key)
	}
	b.mu.Unlock()
	if ok {
		b.waiters.Wake(key)
	}
	return ok, nil
}

// ReleaseAll implements backend.MultiBackend.
func (b *Backend) ReleaseAll(ctx context.Context, keys []string, token string) (int, error) {
	n := 0
	for _, k := range keys {
		if ok, _ := b.Release(ctx, k, token); ok {
			n++
		}
	}
	return n, nil
}

// Holds implements backend.Inspector.
func (b *Backend) Holds(_ context.Context, key, token string) (time.Duration, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.owned(key, token)
	if !ok {
		return 0, false, nil
	}
	return e.expires.Sub(b.now()), true, nil
}

// HoldsAll implements backend.MultiBackend.
func (b *Backend) HoldsAll(ctx context.Context, keys []string, token string) (time.Duration, bool, error) {
	var shortest time.Duration
	for i, k := range keys {
		remaining, ok, _ := b.Holds(ctx, k, token)
		if !ok {
			return 0, false, nil
		}
		if i == 0 || remaining < shortest {
			shortest = remaining
		}
	}
	return shortest, true, nil
}

// Subscribe implements backend.Backend.
func (b *Backend) Subscribe(_ context.Context, key string) (backend.Subscription, error) {
	w, _ := b.waiters.Add(key)
	return w, nil
}

// Delete removes key whoever holds it, as an operator's DEL would; for
// tests of lost leases.
func (b *Backend) Delete(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.locks, key)
}

// Wipe forgets key's lock and fence counter, as a restarted store would.
func (b *Backend) Wipe(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.locks, key)
	delete(b.fences, key)
}
