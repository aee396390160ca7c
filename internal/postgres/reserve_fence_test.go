package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// pausingRepo is the real store with a hook before InsertReservation that
// may block and may replace the context the insert runs with.
type pausingRepo struct {
	reservation.Repository
	beforeInsert func(ctx context.Context) context.Context
}

func (p pausingRepo) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	return p.Repository.InsertReservation(p.beforeInsert(ctx), nr)
}

// The whole fencing story on the real lock client and the real store: a
// holder pauses before its insert for longer than its lease, a second
// request takes the lock over (with a higher fence) and books the seat, then
// the first one resumes. Whether its insert was already on its way to
// PostgreSQL (the lease's cancellation cannot stop it; the fence must) or not
// yet sent (the lease's context stops it), it does not book, and it is told
// the seat is locked rather than taken.
func TestReservePausedHolderCannotBookAfterSuccessor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// inFlight detaches the paused insert from the lease's context.
		inFlight bool
		cause    error
	}{
		{"write already in flight is refused by the fence", true, reservation.ErrStaleFence},
		{"write not yet sent is stopped by the lease context", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, pool := newStore(t)
			ctx := testContext(t)
			s := mustSchedule(t, store, 10)
			locker := lock.New(memlock.New(), lock.Config{})

			paused, resume := make(chan struct{}), make(chan struct{})
			var causeSeen error
			slow := pausingRepo{Repository: store, beforeInsert: func(ctx context.Context) context.Context {
				close(paused)
				<-resume
				causeSeen = context.Cause(ctx)
				if tt.inFlight {
					return context.WithoutCancel(ctx)
				}
				return ctx
			}}
			first := reservation.NewService(slow, locker, reservation.Config{LockTTL: 100 * time.Millisecond}, nil)
			second := reservation.NewService(store, locker, reservation.Config{LockTTL: 5 * time.Second}, nil)

			type result struct {
				r   reservation.Reservation
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := first.Reserve(ctx, reservation.ReserveCommand{ScheduleID: s.ID(), SeatID: 5, UserID: "paused"})
				done <- result{r, err}
			}()
			select {
			case <-paused:
			case res := <-done:
				t.Fatalf("first Reserve returned before its insert: %+v, %v", res.r, res.err)
			}

			// Waits out the paused holder's 100ms lease, then books.
			r, err := second.Reserve(ctx, reservation.ReserveCommand{ScheduleID: s.ID(), SeatID: 5, UserID: "successor", Wait: 5 * time.Second})
			if err != nil {
				close(resume)
				t.Fatalf("successor Reserve: %v", err)
			}
			if r.UserID() != "successor" {
				t.Errorf("successor booked %+v", r)
			}
			close(resume)
			res := <-done
			t.Logf("paused holder: %v", res.err)

			if !errors.Is(causeSeen, lock.ErrLeaseLost) {
				t.Errorf("paused holder's lease context cause = %v, want ErrLeaseLost", causeSeen)
			}
			var locked *reservation.SeatLockedError
			if !errors.As(res.err, &locked) || !errors.Is(res.err, reservation.ErrSeatLocked) {
				t.Fatalf("paused holder's Reserve = %+v, %v; want a *SeatLockedError", res.r, res.err)
			}
			if tt.cause != nil && !errors.Is(res.err, tt.cause) {
				t.Errorf("paused holder's error = %v, want it to wrap %v", res.err, tt.cause)
			}
			if errors.Is(res.err, reservation.ErrSeatTaken) {
				t.Errorf("paused holder's error = %v: it lost the lock, it was not refused as taken", res.err)
			}
			if n := countReservations(t, pool, s.ID()); n != 1 {
				t.Errorf("reservations = %d, want 1", n)
			}
			var owner string
			if err := pool.QueryRow(ctx, `SELECT user_id FROM reservations WHERE schedule_id = $1 AND seat_id = 5`, s.ID()).Scan(&owner); err != nil || owner != "successor" {
				t.Errorf("seat 5 belongs to %q (%v), want successor", owner, err)
			}
		})
	}
}
