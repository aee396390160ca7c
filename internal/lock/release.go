package lock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// releaseBounds bounds the store calls that end leases: each runs under a
// context that keeps the values of the caller's context, none of its
// cancellation, and ends between the release timeout and an eighth more
// after it started. Releases started within the same eighth of a timeout
// share one deadline, so a release costs no context, timer and channel of
// its own (the lease holds its boundedContext).
type releaseBounds struct {
	timeout time.Duration
	mu      sync.Mutex // serialises making a new bucket
	current atomic.Pointer[deadlineBucket]
}

// deadlineBucket is one shared deadline: a context of its own that ends at
// at.
type deadlineBucket struct {
	at     time.Time
	ctx    context.Context
	cancel context.CancelFunc // never called: the bucket ends at its deadline
}

func newReleaseBounds(timeout time.Duration) *releaseBounds {
	return &releaseBounds{timeout: timeout}
}

// bound returns the context of a release started at now with the caller's
// ctx.
func (r *releaseBounds) bound(ctx context.Context, now time.Time) boundedContext {
	if ctx.Done() != nil {
		// Detached, so that context.Cause finds no cancellation of the
		// caller's either.
		ctx = context.WithoutCancel(ctx)
	}
	return boundedContext{values: ctx, bucket: r.bucket(now)}
}

func (r *releaseBounds) bucket(now time.Time) *deadlineBucket {
	step := max(r.timeout/8, time.Millisecond)
	at := now.Add(r.timeout).Truncate(step).Add(step)
	if b := r.current.Load(); b != nil && b.at.Equal(at) {
		return b
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.current.Load(); b != nil && b.at.Equal(at) {
		return b
	}
	ctx, cancel := context.WithDeadline(context.Background(), at)
	b := &deadlineBucket{at: at, ctx: ctx, cancel: cancel}
	r.current.Store(b)
	return b
}

// boundedContext is a release's context: the caller's values, the
// bucket's deadline and end.
type boundedContext struct {
	values context.Context
	bucket *deadlineBucket
}

func (c *boundedContext) Deadline() (time.Time, bool) { return c.bucket.at, true }
func (c *boundedContext) Done() <-chan struct{}       { return c.bucket.ctx.Done() }
func (c *boundedContext) Err() error                  { return c.bucket.ctx.Err() }
func (c *boundedContext) Value(key any) any           { return c.values.Value(key) }

// AfterFunc lets contexts derived from this one follow its end without a
// goroutine each (the context package looks for this method).
func (c *boundedContext) AfterFunc(f func()) (stop func() bool) {
	return context.AfterFunc(c.bucket.ctx, f)
}
