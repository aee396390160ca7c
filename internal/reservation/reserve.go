package reservation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
)

// ReserveCommand asks to book one seat for one user.
type ReserveCommand struct {
	ScheduleID int64
	SeatID     int
	UserID     string
	// Wait is how long to wait for a seat locked by another request; zero
	// answers ErrSeatLocked at once. The lock port caps it (LOCK_MAX_WAIT).
	Wait time.Duration
}

// Reserve books a seat: it takes the seat's lock, checks that the seat is
// free, inserts the reservation and releases the lock (always, even if the
// caller's context was cancelled meanwhile).
//
// The check runs under the request's context joined with the lease's
// (lock.Join): a client that hangs up, or a lease that runs out, stops it
// before anything is written. The insert runs under the request's context
// alone (so still within the request's deadline), not the lease's: once
// it is on its way, PostgreSQL decides its outcome, and an answer must say
// what PostgreSQL decided. The insert carries the lease's fencing token and
// PostgreSQL refuses it if a newer holder of the seat's lock already wrote,
// so a holder paused past its TTL can never book after its successor. For
// the same reason a lease lost after the check does not stop the insert:
// the fence tells truthfully whether a newer holder got there first, where
// giving up would only guess.
//
// A slow COMMIT therefore stands even when the lease's TTL ends while its
// reply is on its way: the client gets its reservation, never seat_locked.
// When the insert's outcome is unknown (the request's context ended or the
// store stopped answering after the transaction was sent), the seat's
// reservation is looked up with a short context of its own (see
// settleUnknownInsert).
//
// Errors: ErrScheduleNotFound, ErrSeatNotFound, *SeatLockedError (another
// request holds the seat, this request's lease ran out during the check, or
// a newer holder wrote first), ErrSeatTaken (already booked), ErrUnavailable
// (Redis or PostgreSQL unreachable), or the request context's error.
func (s *Service) Reserve(ctx context.Context, cmd ReserveCommand) (Reservation, error) {
	if cmd.UserID == "" {
		return Reservation{}, &InvalidError{Field: "userId", Detail: "is required"}
	}
	// Unknown schedules and seats are refused before touching Redis, so no
	// lock key is ever created for a seat that does not exist.
	schedule, err := s.repo.Schedule(ctx, cmd.ScheduleID)
	if err != nil {
		return Reservation{}, fmt.Errorf("load schedule: %w", err)
	}
	if !schedule.HasSeat(cmd.SeatID) {
		return Reservation{}, ErrSeatNotFound
	}

	lease, err := s.locker.Acquire(ctx, SeatLockKey(cmd.ScheduleID, cmd.SeatID),
		lock.Options{TTL: s.lockTTL, Wait: cmd.Wait})
	if err != nil {
		return Reservation{}, lockError(err)
	}
	defer s.release(ctx, lease)

	check, stopCheck := lock.Join(ctx, lease)
	defer stopCheck()
	taken, err := s.repo.SeatReserved(check, cmd.ScheduleID, cmd.SeatID)
	if err != nil {
		return Reservation{}, leaseError(check, fmt.Errorf("check seat: %w", err))
	}
	if taken {
		return Reservation{}, ErrSeatTaken
	}
	// A client that gave up after the check gets nothing written.
	if err := ctx.Err(); err != nil {
		return Reservation{}, fmt.Errorf("before insert: %w", err)
	}
	r, err := s.repo.InsertReservation(ctx, NewReservation{
		ScheduleID: cmd.ScheduleID, SeatID: cmd.SeatID, UserID: cmd.UserID, Fence: lease.Fence(),
	})
	if err != nil {
		err = fmt.Errorf("insert reservation: %w", err)
		if outcomeUnknown(err) {
			return s.settleUnknownInsert(ctx, cmd, err)
		}
		return Reservation{}, staleFenceError(err)
	}
	return r, nil
}

// staleRetryAfter is what a holder refused for a stale fence or a lost lease
// tells its client: the seat's new holder is at work right now.
const staleRetryAfter = time.Second

// leaseError turns a check cancelled because the lease was lost into
// ErrSeatLocked; any other answer (seat taken, not found, unavailable, the
// client gone) is kept: it does not depend on who holds the lock.
func leaseError(work context.Context, err error) error {
	cancelledByLoss := errors.Is(context.Cause(work), lock.ErrLeaseLost) &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	if cancelledByLoss {
		return seatLocked(err)
	}
	return err
}

// staleFenceError turns an insert that PostgreSQL refused for a stale fence
// into ErrSeatLocked: a newer holder of the seat's lock wrote first.
func staleFenceError(err error) error {
	if errors.Is(err, ErrStaleFence) {
		return seatLocked(err)
	}
	return err
}

func seatLocked(err error) error {
	return fmt.Errorf("%w: %w", &SeatLockedError{RetryAfter: staleRetryAfter}, err)
}

func lockError(err error) error {
	var held *lock.HeldError
	switch {
	case errors.As(err, &held):
		return &SeatLockedError{RetryAfter: held.Remaining}
	case errors.Is(err, lock.ErrUnavailable):
		return fmt.Errorf("acquire seat lock: %w: %w", ErrUnavailable, err)
	default:
		return fmt.Errorf("acquire seat lock: %w", err)
	}
}

// release gives the seat lock up. A failure is logged, not returned: the
// booking's outcome is already decided, and the lock expires by itself.
func (s *Service) release(ctx context.Context, lease lock.Lease) {
	err := lease.Release(ctx)
	switch {
	case err == nil:
	case errors.Is(err, lock.ErrNotHeld):
		// The work outlived the lease; the UNIQUE constraint kept the
		// booking correct, but LOCK_TTL is too short for this load.
		s.log.WarnContext(ctx, "seat lock expired before release", slog.String("key", lease.Key()))
	default:
		s.log.ErrorContext(ctx, "release seat lock", slog.String("key", lease.Key()), slog.Any("error", err))
	}
}
