package reservation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// outcomeLookupTimeout bounds the look-up that settles an insert whose
// outcome is unknown. It runs after the request's context may have ended,
// so it has its own; it is long enough to dial a fresh connection (the
// failed one is usually closed) and short next to the HTTP server's write
// slack, so the answer still reaches the client.
const outcomeLookupTimeout = 3 * time.Second

// outcomeUnknown reports whether an insert failed in a way that leaves its
// COMMIT undecided for us: the request's context ended, or PostgreSQL
// stopped answering, possibly after it committed.
func outcomeUnknown(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrUnavailable)
}

// settleUnknownInsert looks up the seat's reservation after an insert whose
// outcome is unknown. This user's reservation means the insert committed:
// it is the answer. Another user's means ours did not (one reservation per
// seat): ErrSeatTaken. No reservation, or no answer, keeps insertErr, which
// is all that is known: PostgreSQL finishes a COMMIT it received even when
// the client has gone, so a look-up racing that last step may find the seat
// free, and the client then hears the insert's failure (503, or nothing
// when it hung up), never a success that did not happen.
func (s *Service) settleUnknownInsert(ctx context.Context, cmd ReserveCommand, insertErr error) (Reservation, error) {
	lookup, cancel := context.WithTimeout(context.WithoutCancel(ctx), outcomeLookupTimeout)
	defer cancel()
	r, err := s.repo.SeatReservation(lookup, cmd.ScheduleID, cmd.SeatID)
	switch {
	case err == nil && r.OwnedBy(cmd.UserID):
		s.log.InfoContext(ctx, "booking committed although its insert failed",
			slog.String("reservation", r.ID().String()), slog.Any("error", insertErr))
		return r, nil
	case err == nil:
		return Reservation{}, fmt.Errorf("%w (the insert failed: %v)", &SeatTakenError{Owner: r.UserID()}, insertErr)
	case errors.Is(err, ErrReservationNotFound):
		return Reservation{}, insertErr
	default:
		s.log.WarnContext(ctx, "could not settle a booking's unknown outcome", slog.Any("error", err))
		return Reservation{}, insertErr
	}
}
