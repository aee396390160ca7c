package lock

import (
	"context"
	"time"
)

// ReleaseAfter ends lease now, as Release does (its Context ends with
// ErrReleased and the watchdog stops), but leaves the key held in the store
// for d more, owner-checked, so that no one else takes it before then: the
// unlock of a ShedLock-style job lock that must stay locked for a minimum
// time. d not above zero releases at once. It returns ErrNotHeld when the
// lease no longer held its lock. For a Lease not made by a Client it
// extends the lease to d and leaves it to expire.
func ReleaseAfter(ctx context.Context, l Lease, d time.Duration) error {
	if d <= 0 {
		return l.Release(ctx)
	}
	own, ok := l.(*lease)
	if !ok {
		return l.Extend(ctx, d)
	}
	return own.releaseAfter(ctx, d)
}

func (l *lease) releaseAfter(ctx context.Context, d time.Duration) error {
	if err := validateTTL(d); err != nil {
		return err
	}
	if already, lost := l.markReleased(); already || lost {
		return ErrNotHeld
	}
	return l.end(ctx, giveUp{keep: d})
}
