package reservation

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Reservation returns a reservation to its owner. Anyone else gets
// ErrReservationNotFound, exactly as for an unknown id, so ids cannot be
// probed. Errors: ErrReservationNotFound, ErrUnavailable.
func (s *Service) Reservation(ctx context.Context, id uuid.UUID, userID string) (Reservation, error) {
	r, err := s.repo.Reservation(ctx, id)
	if err != nil {
		if errors.Is(err, ErrReservationNotFound) {
			return Reservation{}, ErrReservationNotFound
		}
		return Reservation{}, fmt.Errorf("load reservation: %w", err)
	}
	if !r.OwnedBy(userID) {
		return Reservation{}, ErrReservationNotFound
	}
	return r, nil
}
