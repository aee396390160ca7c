package reservation

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Limits of a hold's extensions.
const (
	// DefaultHoldMaxLifetime is how long after its making a hold may live,
	// extensions included, when HOLD_MAX_LIFETIME is not set (HOLD_TTL
	// when that is longer).
	DefaultHoldMaxLifetime = 30 * time.Minute
	// MaxHoldMaxLifetime bounds HOLD_MAX_LIFETIME.
	MaxHoldMaxLifetime = 24 * time.Hour
)

// HoldExtension asks to extend one user's active hold.
type HoldExtension struct {
	ID     uuid.UUID
	UserID string
	// TTL is how long the hold lives from the extension on, by the
	// store's clock: its new expiry is now + TTL...
	TTL time.Duration
	// MaxLifetime ...but never later than MaxLifetime after the hold was
	// made. When that leaves nothing to extend (the hold already expires
	// at or after its cap) the extension is refused with
	// ErrHoldLifetimeExceeded. A hold that already expires later than
	// now + TTL (extended at the same time by a request the store's clock
	// puts later) is answered as it is.
	MaxLifetime time.Duration
}

// Extend gives the user's active hold another HOLD_TTL from now, capped
// at HOLD_MAX_LIFETIME after the hold was made, and returns it. The hold
// and its seats' claims move together, in one transaction of the store
// decided by its clock, so no other buyer can take a seat meanwhile and
// the expiry job cannot drop a claim of a hold it extended. No seat lock
// is taken: the seats' status does not change (they stay held), and the
// claims, locked by the store, keep every booking and every other hold
// off them.
//
// Errors: ErrHoldNotFound (anyone else's hold, as for HoldByID),
// ErrHoldExpired, ErrHoldReleased, ErrHoldConfirmed,
// ErrHoldLifetimeExceeded, ErrUnavailable.
func (s *Service) Extend(ctx context.Context, id uuid.UUID, userID string) (Hold, error) {
	write, cancel := s.storeWrite(ctx)
	defer cancel()
	h, err := s.repo.ExtendHold(write, HoldExtension{ID: id, UserID: userID, TTL: s.holdTTL, MaxLifetime: s.holdLife})
	if err != nil {
		return Hold{}, fmt.Errorf("extend hold: %w", err)
	}
	return h, nil
}
