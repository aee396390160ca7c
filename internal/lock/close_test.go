package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// stalledStore is a store whose acquires fail with an unknown outcome and
// whose releases hang until their context ends: a Redis that stopped
// answering.
type stalledStore struct {
	*memlock.Backend
	releasing chan struct{} // a release has begun
}

func (s *stalledStore) TryAcquire(context.Context, string, string, time.Duration) (backend.Grant, error) {
	return backend.Grant{}, lock.ErrUnavailable
}

func (s *stalledStore) Release(ctx context.Context, _, _ string) (bool, error) {
	select {
	case s.releasing <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return false, ctx.Err()
}

// Close ends a background release that is waiting on a store that does not
// answer, instead of waiting out its timeout: an instance told to stop
// while Redis is down must not hang for the release timeout.
func TestCloseEndsAReleaseWaitingOnTheStore(t *testing.T) {
	store := &stalledStore{Backend: memlock.New(), releasing: make(chan struct{}, 1)}
	c := lock.New(store, lock.Config{ReleaseTimeout: time.Hour})
	if _, err := c.Acquire(t.Context(), "seat", lock.Options{TTL: time.Hour}); err == nil {
		t.Fatal("Acquire on a failing store succeeded")
	}
	select {
	case <-store.releasing:
	case <-time.After(10 * time.Second):
		t.Fatal("no background release began after an acquire of unknown outcome")
	}

	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits 10 s on a release the store does not answer (its timeout is an hour)")
	}
}
