// Package batch gathers calls that arrive while earlier ones are under way,
// so that they reach a store together: one round trip (and, for a
// database, one commit) for many callers, each still answered on its own.
//
// A call that finds a free lane (fewer than Lanes batches in flight) is
// sent at once, alone, in its caller's goroutine: an idle store sees no
// added delay. Otherwise it waits for the first batch in flight to return
// and goes in the next one with every call that arrived meanwhile, up to
// Max. So a call waits for at most one batch round trip before its own is
// sent, and batches grow only as much as the store is slow.
package batch

import (
	"context"
	"sync"
	"time"
)

// Queue sends items in batches through its send function, which must
// answer every item of the batch it is given.
type Queue[T comparable] struct {
	lanes int
	max   int
	send  func(batch []T)
	apart func(T) any

	mu      sync.Mutex
	running int
	pending []T
}

// NewQueue returns a Queue that runs at most lanes batches at once, of at
// most max items each. lanes <= 0 sends every item alone, at once.
func NewQueue[T comparable](lanes, max int, send func(batch []T)) *Queue[T] {
	return &Queue[T]{lanes: lanes, max: max, send: send}
}

// KeepApart makes items with the same non-nil key go in different batches
// (the second waits for the next), for stores where two items of one
// batch must not touch the same row.
func (q *Queue[T]) KeepApart(key func(T) any) *Queue[T] {
	q.apart = key
	return q
}

// Add queues item. When a lane is free it sends item's batch before
// returning (in the caller's goroutine), then goes on with the items that
// arrived meanwhile in a goroutine of its own.
func (q *Queue[T]) Add(item T) {
	if q.lanes <= 0 {
		q.send([]T{item})
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, item)
	if q.running >= q.lanes {
		q.mu.Unlock()
		return
	}
	q.running++
	batch := q.takeLocked()
	q.mu.Unlock()
	q.send(batch)
	q.next()
}

// Withdraw takes item out of the queue if its batch was not taken yet,
// and reports whether it did: a caller whose context ended can then tell
// that nothing was sent for it.
func (q *Queue[T]) Withdraw(item T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p == item {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			return true
		}
	}
	return false
}

// TryAlone takes a free lane for a call that its caller sends itself, at
// once and alone, without making an item of it: what Add does for an item
// that finds a lane free, minus the item, its batch and its answer. It
// reports false when every lane is busy or items wait for a batch (the
// call must then be Added, to keep its turn). A caller that got true calls
// DoneAlone when its call has returned. With no lanes every call goes
// alone and DoneAlone does nothing.
func (q *Queue[T]) TryAlone() bool {
	if q.lanes <= 0 {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.running >= q.lanes || len(q.pending) > 0 {
		return false
	}
	q.running++
	return true
}

// DoneAlone gives back the lane TryAlone took: to the items queued
// meanwhile, sent as the next batch in a goroutine of their own so that
// its caller is answered now, or free.
func (q *Queue[T]) DoneAlone() {
	if q.lanes <= 0 {
		return
	}
	q.next()
}

// Pending is how many items wait for a batch.
func (q *Queue[T]) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// next hands the lane of a batch (or lone call) that has returned to the
// items queued meanwhile, sent in a goroutine of their own so that the
// caller who returned it is answered now, or frees it.
func (q *Queue[T]) next() {
	if batch, ok := q.nextBatch(); ok {
		go q.carry(batch)
	}
}

// carry sends batch, then every batch that queues meanwhile, until none
// waits: one goroutine carries a lane through a busy spell, instead of a
// new goroutine (and the growth of its stack) for every batch.
func (q *Queue[T]) carry(batch []T) {
	for ok := true; ok; batch, ok = q.nextBatch() {
		q.send(batch)
	}
}

// nextBatch takes the batch a returning lane sends next, or frees the lane
// and reports false when nothing waits.
func (q *Queue[T]) nextBatch() ([]T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		q.running--
		return nil, false
	}
	return q.takeLocked(), true
}

// takeLocked takes the next batch: the oldest pending items, up to max,
// none sharing a key with an earlier one (see KeepApart).
func (q *Queue[T]) takeLocked() []T {
	if q.apart == nil {
		n := min(len(q.pending), q.max)
		batch := make([]T, n)
		copy(batch, q.pending)
		q.pending = append(q.pending[:0], q.pending[n:]...)
		return batch
	}
	var batch, rest []T
	seen := make(map[any]bool, len(q.pending))
	for _, p := range q.pending {
		k := q.apart(p)
		if len(batch) == q.max || (k != nil && seen[k]) {
			rest = append(rest, p)
			continue
		}
		if k != nil {
			seen[k] = true
		}
		batch = append(batch, p)
	}
	q.pending = rest
	return batch
}

// Context is the context a batch is sent under: no caller's cancellation
// ends it (the others still want their answer), and its deadline is the
// latest of the callers' (ctxOf gives an item's), at most limit away.
func Context[T any](batch []T, ctxOf func(T) context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(limit)
	latest := time.Time{}
	for _, item := range batch {
		if d, ok := ctxOf(item).Deadline(); ok && d.After(latest) {
			latest = d
		}
	}
	if !latest.IsZero() && latest.Before(deadline) {
		deadline = latest
	}
	return context.WithDeadline(context.Background(), deadline)
}
