package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

const contenders = 50

// race runs fn from contenders goroutines released at once and returns each
// one's error.
func race(fn func(i int) error) []error {
	start := make(chan struct{})
	errs := make([]error, contenders)
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// exactlyOneWins checks that one call succeeded and every other one was
// refused with one of refusals, and returns the winner's index.
func exactlyOneWins(t *testing.T, errs []error, refusals ...error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("contenders %d and %d both booked the seat", winner, i)
		case err == nil:
			winner = i
		case !isAny(err, refusals):
			t.Errorf("contender %d: error = %v, want one of %v", i, err, refusals)
		}
	}
	if winner < 0 {
		t.Fatal("no contender booked the seat")
	}
	return winner
}

func isAny(err error, targets []error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// With no lock at all, the store alone keeps one booking per seat: each
// contender carries its own fence, so a loser is refused either by the
// fence (it came after a higher one) or by the UNIQUE constraint.
func TestConcurrentInsertSameSeatExactlyOneWins(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	ctx := testContext(t)

	errs := race(func(i int) error {
		_, err := insert(ctx, store, s.ID(), 5, fmt.Sprintf("user-%d", i), int64(i+1))
		return err
	})

	winner := exactlyOneWins(t, errs, reservation.ErrSeatTaken, reservation.ErrStaleFence)
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
	var owner string
	if err := pool.QueryRow(ctx, `SELECT user_id FROM reservations WHERE schedule_id = $1`, s.ID()).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("user-%d", winner); owner != want {
		t.Errorf("seat belongs to %q, but %q was told it won", owner, want)
	}
}

// grantAll is a broken lock that lets everyone in, as a lock whose leases
// all expired would. It still mints increasing fences, as the real one does
// for every acquisition. It takes no several keys at once (lock.MultiLocker
// is nil).
type grantAll struct {
	lock.MultiLocker
	fence atomic.Int64
}

func (g *grantAll) Acquire(ctx context.Context, key string, _ lock.Options) (lock.Lease, error) {
	return &grantedLease{key: key, fence: g.fence.Add(1), ctx: ctx}, nil
}

type grantedLease struct {
	key   string
	fence int64
	ctx   context.Context
}

func (l *grantedLease) Key() string                               { return l.key }
func (l *grantedLease) Fence() int64                              { return l.fence }
func (l *grantedLease) Context() context.Context                  { return l.ctx }
func (*grantedLease) Extend(context.Context, time.Duration) error { return lock.ErrNotHeld }
func (*grantedLease) Remaining(context.Context) (time.Duration, error) {
	return 0, lock.ErrNotHeld
}
func (*grantedLease) Release(context.Context) error             { return lock.ErrNotHeld }
func (*grantedLease) Seal(context.Context, time.Duration) error { return lock.ErrNotHeld }
func (*grantedLease) SealWithNote(context.Context, time.Duration, string) error {
	return lock.ErrNotHeld
}

// The whole use case on the real store stays correct when the lock fails
// to exclude anyone.
func TestReserveWithoutMutualExclusionBooksOnce(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	svc := reservation.NewService(store, &grantAll{}, reservation.Config{}, nil)
	ctx := testContext(t)

	errs := race(func(i int) error {
		_, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: s.ID(), SeatID: 5, UserID: fmt.Sprintf("user-%d", i)})
		return err
	})

	// A loser is told the seat is taken (seen by its check or the UNIQUE
	// constraint), or that it is locked (its fence was stale).
	exactlyOneWins(t, errs, reservation.ErrSeatTaken, reservation.ErrSeatLocked)
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
}
