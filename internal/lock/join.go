package lock

import "context"

// Join returns a context that ends when ctx or the lease's Context ends,
// whichever is first, with that one's cause (context.Cause gives
// ErrLeaseLost when the lock was lost). Work under a lock uses it so that it
// stops both when its caller gives up and when the lock is gone; the
// lease's own Context does not end with the caller's. Call cancel when the
// work is done.
func Join(ctx context.Context, lease interface{ Context() context.Context }) (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancelCause(ctx)
	leaseCtx := lease.Context()
	stop := context.AfterFunc(leaseCtx, func() { cancel(context.Cause(leaseCtx)) })
	return work, func() {
		stop()
		cancel(context.Canceled)
	}
}
