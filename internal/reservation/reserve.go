package reservation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

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
	// Claim is the request's idempotency claim (uuid.Nil: none), stored
	// with the reservation in the same statement.
	Claim uuid.UUID
	// Resumed: Claim is an earlier request's, whose answer was lost; if
	// that request booked, its reservation is the answer.
	Resumed bool
}

// Reserve books a seat: it takes the seat's lock, inserts the reservation
// (PostgreSQL refuses a seat already booked in the same statement) and gives
// the lock up, always, even if the caller's context was cancelled
// meanwhile.
//
// Round trips: the schedule comes from memory (see scheduleCache), the
// booking is one statement. With Config.SealBooked, a seat known to be
// booked (this booking committed, or PostgreSQL refused it as taken by an
// owner it named, a *SeatTakenError) has its lock key sealed instead of
// released, with the owner's note (OwnerNote), so every later request for
// it is answered ErrSeatTaken by the lock store alone: one call, no query.
// A seal that the store lost costs one query, and the refusal seals it
// again. The owner's own retry is the exception (see owner.go): a seal
// with the requester's note is answered with their reservation, looked up
// in one query.
//
// The insert runs under the request's context (so still within the
// request's deadline), not the lease's: once it is on its way, PostgreSQL
// decides its outcome, and an answer must say what PostgreSQL decided. It
// carries the lease's fencing token and PostgreSQL refuses it if a newer
// holder of the seat's lock already wrote, so a holder paused past its TTL
// can never book after its successor; a lease lost before the insert
// therefore needs no check of its own. A slow COMMIT stands even when the
// lease's TTL ends while its reply is on its way: the client gets its
// reservation, never seat_locked. When the insert's outcome is unknown (the
// request's context ended or the store stopped answering after the
// statement was sent), the seat's reservation is looked up with a short
// context of its own (see settleUnknownInsert).
//
// A seat already booked by cmd.UserID is not an error: the answer is that
// reservation, whichever way it is found.
//
// A resumed idempotency claim (cmd.Resumed) is looked up first: when the
// earlier request with the claim booked, its reservation is the answer,
// without a lock or a write, marked Recovered; when it booked nothing,
// the booking runs.
//
// Errors: ErrScheduleNotFound, ErrSeatNotFound, an *UnavailableSeat that
// is ErrSeatLocked (another request holds the seat, or a newer holder
// wrote first) or ErrSeatHeld (an active hold claims the seat; the lock is
// released, not sealed: the hold may yet expire), ErrSeatTaken (already
// booked), ErrUnavailable (Redis or PostgreSQL unreachable), or the
// request context's error.
func (s *Service) Reserve(ctx context.Context, cmd ReserveCommand) (Booked, error) {
	if cmd.UserID == "" {
		return Booked{}, &InvalidError{Field: "userId", Detail: "is required"}
	}
	if cmd.Resumed && cmd.Claim != uuid.Nil {
		r, err := s.repo.ReservationByClaim(ctx, cmd.Claim)
		switch {
		case err == nil && r.OwnedBy(cmd.UserID):
			return Booked{Reservation: r, Recovered: true}, nil
		case err != nil && !errors.Is(err, ErrReservationNotFound):
			return Booked{}, fmt.Errorf("look up the claim's reservation: %w", err)
		}
	}
	r, err := s.reserve(ctx, cmd)
	if err == nil {
		s.expect(cmd.ScheduleID, []int{cmd.SeatID}, SeatReserved)
	}
	return Booked{Reservation: r}, err
}

// reserve is Reserve past the claim's look-up: the lock, the write, the
// seal.
func (s *Service) reserve(ctx context.Context, cmd ReserveCommand) (Reservation, error) {
	// Unknown schedules and seats are refused before touching Redis, so no
	// lock key is ever created for a seat that does not exist.
	schedule, err := s.schedules.schedule(ctx, cmd.ScheduleID)
	if err != nil {
		return Reservation{}, fmt.Errorf("load schedule: %w", err)
	}
	if !schedule.HasSeat(cmd.SeatID) {
		return Reservation{}, ErrSeatNotFound
	}

	lease, err := s.locker.Acquire(ctx, SeatLockKey(cmd.ScheduleID, cmd.SeatID),
		lock.Options{TTL: s.lockTTL, Wait: cmd.Wait})
	if err != nil {
		if sealedForUser(err, cmd.UserID) {
			return s.ownersRetry(ctx, cmd)
		}
		return Reservation{}, lockError(err)
	}
	r, err := s.book(ctx, cmd, lease)
	// A seat known booked by a known owner is sealed with the owner's
	// note, if seals are on; a held seat is not: the hold may yet expire.
	note, seal := bookedSeal(cmd, err)
	s.endLeaseWithNote(ctx, lease, s.sealBooked && seal, note)
	return r, err
}

// book writes the reservation under lease.
func (s *Service) book(ctx context.Context, cmd ReserveCommand, lease lock.Lease) (Reservation, error) {
	// A client that gave up while the lock was being taken gets nothing
	// written.
	if err := ctx.Err(); err != nil {
		return Reservation{}, fmt.Errorf("before insert: %w", err)
	}
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	r, err := s.repo.InsertReservation(write, NewReservation{
		ScheduleID: cmd.ScheduleID, SeatID: cmd.SeatID, UserID: cmd.UserID, Fence: lease.Fence(), Claim: cmd.Claim,
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

// staleFenceError turns an insert that PostgreSQL refused for a stale fence
// into ErrSeatLocked: a newer holder of the seat's lock wrote first.
func staleFenceError(err error) error {
	if errors.Is(err, ErrStaleFence) {
		return seatLocked(err)
	}
	return err
}

func seatLocked(err error) error {
	return fmt.Errorf("%w: %w", &UnavailableSeat{Reason: ReasonLocked, RetryAfter: staleRetryAfter}, err)
}

func lockError(err error) error {
	if errors.Is(err, lock.ErrSealed) {
		// Sealed by the booking that took the seat.
		return ErrSeatTaken
	}
	// errors.AsType, not errors.As: a hot seat's refusals pass here on
	// every request, and As's target would be allocated.
	if held, ok := errors.AsType[*lock.HeldError](err); ok {
		return &UnavailableSeat{Reason: ReasonLocked, RetryAfter: held.Remaining}
	}
	if errors.Is(err, lock.ErrUnavailable) {
		return fmt.Errorf("acquire seat lock: %w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("acquire seat lock: %w", err)
}
