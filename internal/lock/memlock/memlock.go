// Package memlock is an in-process lock.Backend: for unit tests and for
// running the service's logic without a store. It gives the same guarantees
// as the other adapters within one process, and none across processes.
package memlock

import (
	"context"
	"sync"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
)

// Backend keeps locks in memory. The zero value is not usable; call New.
type Backend struct {
	mu     sync.Mutex
	now    func() time.Time
	locks  map[string]entry
	fences map[string]int64
	subs   map[string]map[*lock.Waker]struct{}
}

type entry struct {
	token   string
	expires time.Time
}

var _ lock.Backend = (*Backend)(nil)

// New returns an empty Backend.
func New() *Backend {
	return &Backend{
		now:    time.Now,
		locks:  map[string]entry{},
		fences: map[string]int64{},
		subs:   map[string]map[*lock.Waker]struct{}{},
	}
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

// TryAcquire implements lock.Backend.
func (b *Backend) TryAcquire(_ context.Context, key, token string, ttl time.Duration) (lock.Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, held := b.holder(key); held {
		return lock.Grant{Remaining: e.expires.Sub(b.now())}, nil
	}
	b.locks[key] = entry{token: token, expires: b.now().Add(ttl)}
	if b.fences[key] == 0 {
		// Start from the clock, as the Redis adapter does, so fences stay
		// comparable when a deployment switches stores.
		b.fences[key] = b.now().UnixMicro()
	}
	b.fences[key]++
	return lock.Grant{Acquired: true, Fence: b.fences[key]}, nil
}

// Extend implements lock.Backend.
func (b *Backend) Extend(_ context.Context, key, token string, ttl time.Duration) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, held := b.holder(key)
	if !held || e.token != token {
		return false, nil
	}
	b.locks[key] = entry{token: token, expires: b.now().Add(ttl)}
	return true, nil
}

// Release implements lock.Backend.
func (b *Backend) Release(_ context.Context, key, token string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, held := b.holder(key)
	if !held || e.token != token {
		return false, nil
	}
	delete(b.locks, key)
	for s := range b.subs[key] {
		s.Wake()
	}
	return true, nil
}

// Delete removes key whoever holds it, as an operator's DEL would; for
// tests of lost leases.
func (b *Backend) Delete(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.locks, key)
}

// Subscribe implements lock.Backend.
func (b *Backend) Subscribe(_ context.Context, key string) (lock.Subscription, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := lock.NewWaker(func(w *lock.Waker) { b.unsubscribe(key, w) })
	if b.subs[key] == nil {
		b.subs[key] = map[*lock.Waker]struct{}{}
	}
	b.subs[key][s] = struct{}{}
	return s, nil
}

func (b *Backend) unsubscribe(key string, w *lock.Waker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs[key], w)
	if len(b.subs[key]) == 0 {
		delete(b.subs, key)
	}
}

// Wipe forgets key's lock and fence counter, as a restarted store would.
func (b *Backend) Wipe(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.locks, key)
	delete(b.fences, key)
}
