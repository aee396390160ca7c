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
// the first one resumes. Its insert is not the lease's to cancel (it runs
// under the request's context), so it reaches PostgreSQL, whose fence
// refuses it: it does not book, and it is told the seat is locked rather
// than taken.
func TestReservePausedHolderCannotBookAfterSuccessor(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	locker := lock.New(memlock.New(), lock.Config{})

	paused, resume := make(chan struct{}), make(chan struct{})
	var insertCtxErr error
	slow := pausingRepo{Repository: store, beforeInsert: func(ctx context.Context) context.Context {
		close(paused)
		<-resume
		insertCtxErr = ctx.Err()
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
		done <- result{r.Reservation, err}
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

	if insertCtxErr != nil {
		t.Errorf("paused holder's insert context ended (%v): the lost lease must not cancel it", insertCtxErr)
	}
	var locked *reservation.UnavailableSeat
	if !errors.As(res.err, &locked) || !errors.Is(res.err, reservation.ErrStaleFence) {
		t.Fatalf("paused holder's Reserve = %+v, %v; want a *UnavailableSeat from a stale fence", res.r, res.err)
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
}
