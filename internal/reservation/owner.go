package reservation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/seatlock/seatlock/internal/lock"
)

// The owner's retry: a user who books a seat that is already theirs (the
// answer to their first request was lost, or they clicked twice) gets
// their reservation, not ErrSeatTaken. The one-click path is naturally
// idempotent that way, with no Idempotency-Key: PostgreSQL answers the
// owner with their own reservation (see Repository.InsertReservation),
// and a sealed seat's seal carries a digest of its owner's id
// (OwnerNote), so that the lock store's refusal, the one call every
// request for a booked seat makes, also says whose seat it is. Only a
// refusal whose note is the requester's own digest pays a look-up
// (Repository.SeatReservation); everyone else's stays one lock-store call
// and no query.

// OwnerNote is the note a booked seat's seal carries (lock.Sealer.SealWithNote):
// the first 8 bytes of the SHA-256 of the owner's user id, in hex. A
// digest, not the id, because the seal is readable by anyone who can read
// the lock store. It only decides who pays a look-up: two users whose
// digests collide (one pair in 2^32 at four billion users) cost one query
// and still learn the truth from PostgreSQL.
func OwnerNote(userID string) string {
	note := ownerNote(userID)
	return string(note[:])
}

// isOwnerNote reports whether note is OwnerNote(userID), without making
// the note's string: every refused request for a hot seat asks.
func isOwnerNote(note, userID string) bool {
	digest := ownerNote(userID)
	return note == string(digest[:])
}

// ownerNote is OwnerNote's text, in an array of its own.
func ownerNote(userID string) (note [16]byte) {
	sum := sha256.Sum256([]byte(userID))
	hex.Encode(note[:], sum[:8])
	return note
}

// SeatTakenError is ErrSeatTaken (errors.Is) that names the owner of the
// booking that took the seat, so that the refused booking can seal the
// seat with that owner's note. Repositories return it when they know the
// owner; a plain ErrSeatTaken leaves the seat unsealed (just released).
type SeatTakenError struct {
	// Owner is the user id of the seat's active reservation.
	Owner string
}

func (e *SeatTakenError) Error() string { return ErrSeatTaken.Error() }

// Is makes errors.Is(err, ErrSeatTaken) true for a *SeatTakenError.
func (e *SeatTakenError) Is(target error) bool { return target == ErrSeatTaken }

// bookedSeal says how a booking's lease ends once its outcome is known:
// sealed with the note of the seat's owner when the seat is known booked
// by a known owner (this booking, or the one PostgreSQL named in its
// refusal), released otherwise. A seat taken by an owner nobody named is
// not sealed: a seal without its owner's note would turn that owner's
// retry away.
func bookedSeal(cmd ReserveCommand, err error) (note string, seal bool) {
	var taken *SeatTakenError
	switch {
	case err == nil:
		return OwnerNote(cmd.UserID), true
	case errors.As(err, &taken) && taken.Owner != "":
		return OwnerNote(taken.Owner), true
	}
	return "", false
}

// sealedForUser reports whether a refused acquire found the seat sealed
// with user's note: their own booking, probably.
func sealedForUser(err error, userID string) bool {
	sealed, ok := errors.AsType[*lock.SealedError](err)
	return ok && sealed.Note != "" && isOwnerNote(sealed.Note, userID)
}

// ownersRetry answers a booking of a seat sealed with the user's note: the
// seat's active reservation if it is the user's (one query), ErrSeatTaken
// if the seat is someone else's (a digest collision) or has none any more
// (a seal is a shortcut; without the lock, the seat is not ours to book
// here: the user's next try, once the seal is lifted or gone, books it).
func (s *Service) ownersRetry(ctx context.Context, cmd ReserveCommand) (Reservation, error) {
	r, err := s.repo.SeatReservation(ctx, cmd.ScheduleID, cmd.SeatID)
	switch {
	case err == nil && r.OwnedBy(cmd.UserID):
		return r, nil
	case err == nil, errors.Is(err, ErrReservationNotFound):
		return Reservation{}, ErrSeatTaken
	}
	return Reservation{}, fmt.Errorf("look up the owner's reservation: %w", err)
}
