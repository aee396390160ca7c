package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// lateStore answers acquires normally until late is set, then as a store
// that ran them after the caller's deadline by its own clock: a store
// whose clock is a little ahead of the caller's.
type lateStore struct {
	*memlock.Backend
	late atomic.Bool
}

func (s *lateStore) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	if s.late.Load() {
		return backend.Grant{}, fmt.Errorf("store: acquire: %w: %w", backend.ErrUnavailable, backend.ErrPastDeadline)
	}
	return s.Backend.TryAcquire(ctx, key, token, ttl)
}

// A store's verdict that the call ran past the caller's deadline is the
// caller's deadline, a held lock, even before the caller's own clock gets
// there: never an outage.
func TestPastDeadlineIsTheCallersDeadline(t *testing.T) {
	store := &lateStore{Backend: memlock.New()}
	c := lock.New(store, lock.Config{})
	defer c.Close()
	holder, err := c.Acquire(t.Context(), "seat", lock.Options{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(context.Background()) }()

	store.late.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	_, err = c.Acquire(ctx, "seat", lock.Options{TTL: time.Second})
	if errors.Is(err, lock.ErrUnavailable) {
		t.Fatalf("Acquire = %v: an outage, want the caller's deadline", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire = %v, want context.DeadlineExceeded", err)
	}
}
