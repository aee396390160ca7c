package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// exactlyOneWins checks that one call succeeded and every other one was told
// the seat is taken, and returns the winner's index.
func exactlyOneWins(t *testing.T, errs []error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("contenders %d and %d both booked the seat", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, reservation.ErrSeatTaken):
			t.Errorf("contender %d: error = %v, want ErrSeatTaken", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no contender booked the seat")
	}
	return winner
}

// With no lock at all, the UNIQUE constraint alone keeps one booking per seat.
func TestConcurrentInsertSameSeatExactlyOneWins(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	ctx := testContext(t)

	errs := race(func(i int) error {
		_, err := store.InsertReservation(ctx, s.ID(), 5, fmt.Sprintf("user-%d", i))
		return err
	})

	winner := exactlyOneWins(t, errs)
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
// all expired would.
type grantAll struct{}

func (grantAll) Acquire(_ context.Context, key string, _ time.Duration) (lock.Lease, error) {
	return grantedLease(key), nil
}

type grantedLease string

func (l grantedLease) Key() string                 { return string(l) }
func (grantedLease) Release(context.Context) error { return lock.ErrNotHeld }

// The whole use case on the real store stays correct when the lock fails
// to exclude anyone.
func TestReserveWithoutMutualExclusionBooksOnce(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	svc := reservation.NewService(store, grantAll{}, reservation.Config{}, nil)
	ctx := testContext(t)

	errs := race(func(i int) error {
		_, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: s.ID(), SeatID: 5, UserID: fmt.Sprintf("user-%d", i)})
		return err
	})

	exactlyOneWins(t, errs)
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations = %d, want 1", n)
	}
}
