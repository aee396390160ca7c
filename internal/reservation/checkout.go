package reservation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
)

// Hold claims every seat of cmd for cmd.UserID, or none. The seats' locks
// are taken in one atomic call of the lock store; under them PostgreSQL
// checks that no seat is reserved or held by an unexpired hold and stores
// the hold with the locks' fences, in one transaction; then the locks are
// released, always: from then on the hold itself keeps the seats, in
// PostgreSQL, until it is confirmed, released or expires.
//
// A resumed idempotency claim (cmd.Resumed) is looked up first: when the
// earlier request with the claim made a hold, that hold is the answer (as
// it is now), without a lock or a write, marked Recovered; otherwise the
// hold is made.
//
// Errors: *InvalidError (seat list), ErrScheduleNotFound, ErrSeatNotFound,
// *SeatsUnavailableError (every seat that is locked, held or taken),
// ErrUnavailable, or ctx's error.
func (s *Service) Hold(ctx context.Context, cmd HoldCommand) (Held, error) {
	if err := cmd.Validate(); err != nil {
		return Held{}, err
	}
	if h, found, err := s.resumedHold(ctx, cmd.Claim, cmd.Resumed, cmd.UserID); found || err != nil {
		return Held{Hold: h, Recovered: found}, err
	}
	h, err := s.hold(ctx, cmd)
	return Held{Hold: h}, err
}

// hold is Hold past the claim's look-up.
func (s *Service) hold(ctx context.Context, cmd HoldCommand) (Hold, error) {
	seats := slices.Sorted(slices.Values(cmd.SeatIDs))
	schedule, err := s.schedules.schedule(ctx, cmd.ScheduleID)
	if err != nil {
		return Hold{}, fmt.Errorf("load schedule: %w", err)
	}
	for _, seat := range seats {
		if !schedule.HasSeat(seat) {
			return Hold{}, ErrSeatNotFound
		}
	}
	h, err := s.holdSeats(ctx, cmd, seats)
	var held *lock.HeldError
	if errors.As(err, &held) {
		return Hold{}, s.unavailable(ctx, cmd.ScheduleID, seats, held)
	}
	return h, err
}

// resumedHold is the hold a resumed idempotency claim made, if any: then
// it is the answer (as it is now), without a lock or a write.
func (s *Service) resumedHold(ctx context.Context, claim uuid.UUID, resumed bool, userID string) (Hold, bool, error) {
	if !resumed || claim == uuid.Nil {
		return Hold{}, false, nil
	}
	h, err := s.repo.HoldByClaim(ctx, claim)
	switch {
	case err == nil && h.OwnedBy(userID):
		return h, true, nil
	case err != nil && !errors.Is(err, ErrHoldNotFound):
		return Hold{}, false, fmt.Errorf("look up the claim's hold: %w", err)
	}
	return Hold{}, false, nil
}

// holdSeats takes the locks of seats (sorted, of cmd's schedule) in one
// call and stores the hold under them. A lock some other request holds is
// returned as the lock port's *lock.HeldError, as it is; other failures of
// the lock store as lockError makes them.
func (s *Service) holdSeats(ctx context.Context, cmd HoldCommand, seats []int) (Hold, error) {
	keySeat := seatsByLockKey(cmd.ScheduleID, seats)
	lease, err := s.locker.AcquireAll(ctx, seatLockKeys(cmd.ScheduleID, seats), lock.Options{TTL: s.lockTTL})
	if err != nil {
		var held *lock.HeldError
		if errors.As(err, &held) {
			return Hold{}, held
		}
		return Hold{}, lockError(err)
	}
	defer s.endLease(ctx, lease, false)
	if err := ctx.Err(); err != nil {
		return Hold{}, fmt.Errorf("before insert: %w", err)
	}
	// The lease's keys are sorted as strings ("seat:10" before "seat:2"):
	// the fences follow them, not the seats' numeric order.
	fences := make([]int64, len(seats))
	for i, key := range lease.Keys() {
		fences[slices.Index(seats, keySeat[key])] = lease.Fences()[i]
	}
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	h, err := s.repo.InsertHold(write, NewHold{
		ScheduleID: cmd.ScheduleID, SeatIDs: seats, Fences: fences, UserID: cmd.UserID, TTL: s.holdTTL,
		MaxLive: s.maxHolds, Claim: cmd.Claim,
	})
	if err != nil {
		return Hold{}, fmt.Errorf("insert hold: %w", err)
	}
	s.expect(cmd.ScheduleID, seats, SeatHeld)
	return h, nil
}

// unavailable explains a hold refused because some seat locks were held:
// PostgreSQL tells which seats are taken or held (a booked seat's lock key
// may be sealed, which the lock store reports as held), and the other
// locked seats are "locked", with their holders' remaining TTL. Seats that
// were free of locks are listed too when PostgreSQL says they are taken or
// held, so the client learns everything in one answer.
func (s *Service) unavailable(ctx context.Context, scheduleID int64, seats []int, held *lock.HeldError) error {
	known, err := s.repo.UnavailableSeats(ctx, scheduleID, seats)
	if err != nil {
		return fmt.Errorf("seats held by locks, and could not say why: %w", err)
	}
	bySeat := make(map[int]UnavailableSeat, len(known)+len(held.Keys))
	keySeat := seatsByLockKey(scheduleID, seats)
	for _, k := range held.Keys {
		seat := keySeat[k.Key]
		bySeat[seat] = UnavailableSeat{SeatID: seat, Reason: ReasonLocked, RetryAfter: max(k.Remaining, time.Second)}
	}
	for _, u := range known {
		bySeat[u.SeatID] = u
	}
	out := &SeatsUnavailableError{}
	for _, seat := range seats {
		if u, ok := bySeat[seat]; ok {
			out.Seats = append(out.Seats, u)
		}
	}
	return out
}

// HoldByID returns a hold to its owner; anyone else gets ErrHoldNotFound,
// exactly as for an unknown id.
func (s *Service) HoldByID(ctx context.Context, id uuid.UUID, userID string) (Hold, error) {
	h, err := s.repo.Hold(ctx, id)
	if err != nil {
		if errors.Is(err, ErrHoldNotFound) {
			return Hold{}, ErrHoldNotFound
		}
		return Hold{}, fmt.Errorf("load hold: %w", err)
	}
	if !h.OwnedBy(userID) {
		return Hold{}, ErrHoldNotFound
	}
	return h, nil
}

// holdLockWait is how long confirming or releasing a hold waits for a
// seat lock held by a booking attempt in flight (refused by the hold, it
// gives the lock up within a round trip or two).
const holdLockWait = 5 * time.Second

// lockHoldSeats takes the locks of an active hold's seats, so that the
// change waits for a booking attempt in flight on them. The order of the
// seats' events no longer depends on it: each change is recorded in
// PostgreSQL's order, in its own transaction (seat_changes).
func (s *Service) lockHoldSeats(ctx context.Context, h Hold) (lock.MultiLease, error) {
	lease, err := s.locker.AcquireAll(ctx, seatLockKeys(h.scheduleID, h.seatIDs), lock.Options{TTL: s.lockTTL, Wait: holdLockWait})
	if err != nil {
		return nil, lockError(err)
	}
	return lease, nil
}

// seatLockKeys are the lock keys of seats, in the seats' order.
func seatLockKeys(scheduleID int64, seats []int) []string {
	keys := make([]string, len(seats))
	for i, seat := range seats {
		keys[i] = SeatLockKey(scheduleID, seat)
	}
	return keys
}

// seatsByLockKey maps each seat's lock key to the seat: the lock port
// answers in keys (a lease's, a HeldError's), the use cases in seats.
func seatsByLockKey(scheduleID int64, seats []int) map[string]int {
	bySeat := make(map[string]int, len(seats))
	for _, seat := range seats {
		bySeat[SeatLockKey(scheduleID, seat)] = seat
	}
	return bySeat
}

// Confirm books every seat of the user's hold at once and returns the
// reservations; confirming a confirmed hold returns the same ones, marked
// Again (so a retry whose first answer was lost gets the same answer
// again). The
// hold's claims keep every other booking off its seats and the UNIQUE
// constraint has the last word; the seats' locks are taken all the same
// (lockHoldSeats).
//
// Errors: ErrHoldNotFound, ErrHoldExpired, ErrHoldReleased,
// *SeatsUnavailableError, *UnavailableSeat (locked), ErrUnavailable.
func (s *Service) Confirm(ctx context.Context, id uuid.UUID, userID string) (Confirmed, error) {
	h, err := s.HoldByID(ctx, id, userID)
	if err != nil {
		return Confirmed{}, err
	}
	if h.Status() == HoldActive {
		lease, err := s.lockHoldSeats(ctx, h)
		if err != nil {
			return Confirmed{}, err
		}
		defer s.endLease(ctx, lease, false)
	}
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	rs, err := s.repo.ConfirmHold(write, id, userID)
	if err != nil {
		return Confirmed{}, fmt.Errorf("confirm hold: %w", err)
	}
	s.expect(h.ScheduleID(), h.SeatIDs(), SeatReserved)
	return Confirmed{Reservations: rs, Again: h.Status() != HoldActive}, nil
}

// Release frees the seats of the user's hold at once. Releasing again, or
// releasing an expired hold, succeeds. Errors: ErrHoldNotFound,
// ErrHoldConfirmed, *UnavailableSeat (locked), ErrUnavailable.
func (s *Service) Release(ctx context.Context, id uuid.UUID, userID string) error {
	h, err := s.HoldByID(ctx, id, userID)
	if err != nil {
		return err
	}
	if h.Status() == HoldActive {
		lease, err := s.lockHoldSeats(ctx, h)
		if err != nil {
			return err
		}
		defer s.endLease(ctx, lease, false)
	}
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	freed, err := s.repo.ReleaseHold(write, id, userID)
	if err != nil {
		return fmt.Errorf("release hold: %w", err)
	}
	s.expect(h.ScheduleID(), freed, SeatAvailable)
	return nil
}

// expireBatch bounds one ExpireHolds run.
const expireBatch = 500

// ExpireHolds clears the claims of expired holds; each freed seat's
// "available" change is recorded with the clearing (seat_changes), for the
// live seat map. Expiry itself needs no clean-up (every read decides it by
// the clock); this is for the live seat map, and for the table's size.
// Each seat is cleared under its lock; a seat whose lock is busy waits for
// the next run, and one that is sealed (booked since) loses its claim
// silently. It returns how many seats it freed.
func (s *Service) ExpireHolds(ctx context.Context) (int, error) {
	seats, err := s.repo.ExpiredClaims(ctx, expireBatch)
	if err != nil {
		return 0, fmt.Errorf("list expired claims: %w", err)
	}
	announced := 0
	for _, seat := range seats {
		lease, err := s.locker.Acquire(ctx, SeatLockKey(seat.ScheduleID, seat.SeatID), lock.Options{TTL: s.lockTTL})
		switch {
		case errors.Is(err, lock.ErrSealed):
			if _, err := s.repo.DropExpiredClaim(ctx, seat); err != nil {
				return announced, fmt.Errorf("drop expired claim: %w", err)
			}
			continue
		case errors.Is(err, lock.ErrHeld):
			continue
		case err != nil:
			return announced, lockError(err)
		}
		freed, err := s.repo.DropExpiredClaim(ctx, seat)
		if err == nil && freed {
			announced++
			s.expect(seat.ScheduleID, []int{seat.SeatID}, SeatAvailable)
		}
		s.endLease(ctx, lease, false)
		if err != nil {
			return announced, fmt.Errorf("drop expired claim: %w", err)
		}
	}
	return announced, nil
}
