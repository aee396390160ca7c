package lock

import "context"

// WithLock acquires key, runs fn with a context that ends when ctx ends or
// the lock is lost (Join), and always releases. It returns Acquire's error
// without running fn, fn's error, or, if fn succeeded but the lease was gone
// by the time of release, ErrNotHeld: the work may have overlapped another
// holder's.
func WithLock(ctx context.Context, l Locker, key string, opts Options, fn func(ctx context.Context, lease Lease) error) (err error) {
	lease, err := l.Acquire(ctx, key, opts)
	if err != nil {
		return err
	}
	defer func() {
		if releaseErr := lease.Release(ctx); err == nil {
			err = releaseErr
		}
	}()
	work, cancel := Join(ctx, lease)
	defer cancel()
	return fn(work, lease)
}
