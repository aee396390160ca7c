package reservation_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// lookedUp is allCalls with the look-up of the seat's reservation that
// follows an insert whose outcome is unknown.
func lookedUp(seat int) []string {
	return []string{"Schedule", acquired(seat), "InsertReservation", "SeatReservation", released(seat)}
}

// A booking that committed stands even when the lease runs out while
// COMMIT's reply is on its way: the fence and the UNIQUE constraint already
// decided, so the client gets its reservation, not seat_locked (which would
// send it retrying into seat_taken for its own seat).
func TestReserveCommittedThenLeaseLostIsBooked(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(1)
	repo.committed = func(context.Context) { locker.lastLease().lose() }

	r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

	wantBooked(3)(t, r.Reservation, err)
	if errors.Is(err, reservation.ErrSeatLocked) {
		t.Errorf("Reserve error = %v: a committed booking is not seat_locked", err)
	}
	if n := repo.count(); n != 1 {
		t.Errorf("stored reservations = %d, want 1", n)
	}
	if got := locker.releases(); got != 1 {
		t.Errorf("releases = %d, want 1", got)
	}
}

// When the request's own context ends while COMMIT's reply is on its way,
// the outcome is unknown to the insert; the use case looks the seat up with
// a short context of its own and finds the booking it made.
func TestReserveCommittedThenRequestEndedFindsTheBooking(t *testing.T) {
	t.Parallel()
	type callerKey struct{}
	tests := []struct {
		name string
		// end ends the request's context from inside the insert,
		// after the row was stored, and returns once the insert's
		// context (derived from the request's) has ended too.
		end func(insert context.Context, cancel context.CancelFunc)
		err error
	}{
		{"client hung up", func(_ context.Context, cancel context.CancelFunc) { cancel() }, context.Canceled},
		// Waits for the insert's context, not the request's: a context
		// whose deadline passes closes its Done channel before it
		// cancels its children, so the insert could still find its
		// own context alive, answer with the row, and skip the look-up.
		{"request deadline passed", func(insert context.Context, _ context.CancelFunc) { <-insert.Done() }, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, locker, svc := newLeaseTest(1)
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callerKey{}, "caller"), 50*time.Millisecond)
			defer cancel()
			repo.committed = func(insert context.Context) { tt.end(insert, cancel) }

			r, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

			if !errors.Is(ctx.Err(), tt.err) {
				t.Fatalf("request context error = %v, want %v", ctx.Err(), tt.err)
			}
			wantBooked(3)(t, r.Reservation, err)
			if n := repo.count(); n != 1 {
				t.Errorf("stored reservations = %d, want 1", n)
			}
			if got := locker.j.list(); !slices.Equal(got, lookedUp(3)) {
				t.Errorf("calls:\n got  %q\n want %q", got, lookedUp(3))
			}
			lookups := repo.contexts("SeatReservation")
			if len(lookups) != 1 {
				t.Fatalf("SeatReservation called %d times, want once", len(lookups))
			}
			deadline, ok := lookups[0].Deadline()
			if !ok || time.Until(deadline) > 10*time.Second {
				t.Errorf("look-up deadline = %v (set %v), want a short one of its own", deadline, ok)
			}
			if lookups[0].Value(callerKey{}) != "caller" {
				t.Errorf("the look-up lost the caller's context values")
			}
		})
	}
}

// An insert whose outcome is unknown (the store did not answer) is settled
// by looking the seat up: someone else's reservation means ours did not
// commit (seat_taken); no reservation, or no answer to the look-up either,
// keeps the insert's own error.
func TestReserveUnknownInsertOutcome(t *testing.T) {
	t.Parallel()
	lookupDown := fmt.Errorf("postgres: select seat reservation: %w: %w", reservation.ErrUnavailable, io.ErrUnexpectedEOF)
	tests := []struct {
		name  string
		setup func(repo *fakeRepo)
		check func(*testing.T, reservation.Reservation, error)
		rows  int
	}{
		{
			name:  "seat still free",
			setup: func(repo *fakeRepo) { repo.fail["InsertReservation"] = errDBDown },
			check: wantErr(errDBDown, reservation.ErrSeatTaken, reservation.ErrSeatLocked),
		},
		{
			name: "seat booked by another user",
			setup: func(repo *fakeRepo) {
				repo.before["InsertReservation"] = func() { repo.addReservation(scheduleID, 3, "bob") }
				repo.fail["InsertReservation"] = errDBDown
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrUnavailable, reservation.ErrSeatLocked),
			rows:  1,
		},
		{
			name: "look-up unavailable too",
			setup: func(repo *fakeRepo) {
				repo.fail["InsertReservation"] = errDBDown
				repo.fail["SeatReservation"] = lookupDown
			},
			check: wantErr(errDBDown, reservation.ErrSeatTaken, reservation.ErrSeatLocked),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, locker, svc := newLeaseTest(1)
			tt.setup(repo)

			r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

			tt.check(t, r.Reservation, err)
			if got := locker.j.list(); !slices.Equal(got, lookedUp(3)) {
				t.Errorf("calls:\n got  %q\n want %q", got, lookedUp(3))
			}
			if n := repo.count(); n != tt.rows {
				t.Errorf("stored reservations = %d, want %d", n, tt.rows)
			}
			if got := locker.releases(); got != 1 {
				t.Errorf("releases = %d, want 1", got)
			}
		})
	}
}

// A client that hangs up while the lock is taken stops the booking before
// the insert: nothing is written, and the lock is released.
func TestReserveRequestCancelledBeforeInsert(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	locker.onAcquire = func(*fakeLease) { cancel() }

	r, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

	wantErr(context.Canceled, reservation.ErrSeatLocked)(t, r.Reservation, err)
	if got := repo.insertsSeen(); len(got) != 0 {
		t.Errorf("inserts = %+v, want none", got)
	}
	if n := repo.count(); n != 0 {
		t.Errorf("stored reservations = %d, want 0", n)
	}
	if got := locker.releases(); got != 1 {
		t.Errorf("releases = %d, want 1", got)
	}
	if cause := context.Cause(locker.lease(0).Context()); !errors.Is(cause, lock.ErrReleased) {
		t.Errorf("lease context cause = %v, want ErrReleased", cause)
	}
}

// A lease lost before the insert began does not stop
// the insert: the seat's fence decides truthfully. With no newer holder
// having written, the booking stands; after a newer holder's write it is
// refused as stale, which the client hears as seat_locked.
func TestReserveLeaseLostBeforeInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		newerHolder   bool
		check         func(*testing.T, reservation.Reservation, error)
		fenceAfter    int64
		reservedAfter int
	}{
		{"no newer holder: booked", false, wantBooked(3), 5, 1},
		{"newer holder wrote: seat locked", true, wantLeaseError(reservation.ErrStaleFence), 6, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, locker, svc := newLeaseTest(5)
			locker.onAcquire = func(l *fakeLease) {
				l.lose()
				if tt.newerHolder {
					repo.setFence(scheduleID, 3, 6)
				}
			}

			r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

			tt.check(t, r.Reservation, err)
			if got := repo.insertsSeen(); len(got) != 1 || got[0].Fence != 5 {
				t.Errorf("inserts = %+v, want one with the lost lease's fence 5", got)
			}
			if got := repo.fence(scheduleID, 3); got != tt.fenceAfter {
				t.Errorf("seat fence = %d, want %d", got, tt.fenceAfter)
			}
			if n := repo.count(); n != tt.reservedAfter {
				t.Errorf("stored reservations = %d, want %d", n, tt.reservedAfter)
			}
		})
	}
}
