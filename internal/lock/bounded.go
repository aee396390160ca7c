package lock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// releaseBounds hands out the contexts of releases: each keeps the values
// of the caller's context, none of its cancellation, and ends between
// timeout and timeout + timeout/8 from now. Releases started within the
// same eighth of a timeout share one deadline, so a release costs one small
// allocation instead of a context, a timer and a channel of its own.
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

// context returns a context with ctx's values that ends between the
// timeout and an eighth more from now.
func (r *releaseBounds) context(ctx context.Context) context.Context {
	return &boundedContext{values: ctx, bucket: r.bucket(time.Now())}
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
// bucket's deadline and cancellation.
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
