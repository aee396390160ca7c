package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/reservation"
)

// lockHoldToExtend reads hold $1 for update, as confirming and releasing
// do, with what an extension by the transaction's clock would give it:
// whether it has reached its cap (created_at + $2 ms; nothing left to
// extend) and its new expiry, now() + $3 ms within that cap.
const lockHoldToExtend = `
SELECT ` + holdColumns + `,
	created_at + $2 * interval '1 millisecond' <= expires_at,
	least(now() + $3 * interval '1 millisecond', created_at + $2 * interval '1 millisecond')
FROM holds WHERE id = $1 FOR UPDATE`

// extendClaims moves hold $1's live claims and the hold itself to expire
// at $2, in one statement. The claims are locked first, in seat order (the
// order a new hold takes its seats' claim rows in, so the two cannot
// deadlock): from then on no clean-up (DropExpiredClaim), booking or other
// hold can drop or take one over, and each of those that was waiting for a
// row sees the new expiry when it rechecks the row. A claim already gone
// (dropped or taken over by a writer whose clock found it expired before
// the lock was granted) is not extended; then the hold is not either: no
// row comes back, and the transaction rolls the claims back.
const extendClaims = `
WITH claims AS (
	SELECT schedule_id, seat_id FROM seat_claims
	WHERE hold_id = $1 AND expires_at > now()
	ORDER BY schedule_id, seat_id
	FOR UPDATE
), extended AS (
	UPDATE seat_claims c SET expires_at = $2
	FROM claims
	WHERE c.schedule_id = claims.schedule_id AND c.seat_id = claims.seat_id AND c.hold_id = $1
	RETURNING c.seat_id
)
UPDATE holds SET expires_at = $2
WHERE id = $1 AND cardinality(seat_ids) = (SELECT count(*) FROM extended)
RETURNING ` + holdColumns

// ExtendHold implements reservation.Repository in one transaction, whose
// clock (now(), the time it began) decides that the hold is active and
// what its new expiry is: the hold's row is locked as confirming and
// releasing lock it, so the three are ordered; then its claims and the
// hold move together (extendClaims), and its entry among the user's live
// holds with them.
func (s *Store) ExtendHold(ctx context.Context, ext reservation.HoldExtension) (reservation.Hold, error) {
	var extended reservation.Hold
	err := s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		var (
			capped bool
			until  time.Time
		)
		h, err := scanHold(withExtra{tx.QueryRow(ctx, lockHoldToExtend, ext.ID, ext.MaxLifetime.Milliseconds(), ext.TTL.Milliseconds()),
			[]any{&capped, &until}})
		switch {
		case errors.Is(err, pgx.ErrNoRows) || err == nil && !h.OwnedBy(ext.UserID):
			return reservation.ErrHoldNotFound
		case err != nil:
			return err
		}
		switch h.Status() {
		case reservation.HoldConfirmed:
			return reservation.ErrHoldConfirmed
		case reservation.HoldReleased:
			return reservation.ErrHoldReleased
		case reservation.HoldExpired:
			return reservation.ErrHoldExpired
		}
		switch {
		case capped:
			return reservation.ErrHoldLifetimeExceeded
		case !until.After(h.ExpiresAt()):
			// Extended as far already, by a request whose transaction
			// began after this one's: the hold is the answer as it is.
			extended = h
			return nil
		}
		extended, err = scanHold(tx.QueryRow(ctx, extendClaims, ext.ID, until))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return reservation.ErrHoldExpired
		case err != nil:
			return err
		}
		return moveLiveHold(ctx, tx, ext.UserID, ext.ID, extended.ExpiresAt())
	})
	if errors.Is(err, reservation.ErrHoldLifetimeExceeded) {
		return reservation.Hold{}, reservation.ErrHoldLifetimeExceeded
	}
	if err != nil {
		return reservation.Hold{}, holdError("extend hold", err)
	}
	return extended, nil
}

// withExtra is a row whose Scan fills extra after the destinations it is
// given: scanHold reads the hold, the caller the columns that follow it.
type withExtra struct {
	pgx.Row
	extra []any
}

func (r withExtra) Scan(dest ...any) error {
	return r.Row.Scan(slices.Concat(dest, r.extra)...)
}
