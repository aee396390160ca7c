package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// announceExpired marks up to $1 holds that expired unconfirmed and
// unreleased as announced, the longest expired first, through the partial
// index holds_expiry_unannounced. A hold locked by a confirmation, a
// release or an extension under way is skipped: that change decides, and
// if it leaves the hold expired the next run takes it. One the change
// confirmed or released meanwhile no longer qualifies when its lock is
// taken (the row is checked again).
const announceExpired = `
WITH due AS (
	SELECT id AS due_id FROM holds
	WHERE expires_at <= now() AND confirmed_at IS NULL AND released_at IS NULL AND expiry_announced_at IS NULL
	ORDER BY expires_at
	LIMIT $1
	FOR UPDATE SKIP LOCKED
)
UPDATE holds SET expiry_announced_at = now() FROM due WHERE id = due.due_id
RETURNING ` + holdColumns

// AnnounceExpiredHolds marks up to limit holds that expired unconfirmed
// and unreleased as announced, and writes their hold.expired events (when
// the Store writes events), in one transaction; it returns how many. Each
// hold is announced once, however many run at once; a hold announced is
// expired to ConfirmHold, ReleaseHold and ExtendHold, which lock the same
// row, so a hold is never both confirmed and announced. PurgeHolds keeps
// an expired hold until it is announced.
func (s *Store) AnnounceExpiredHolds(ctx context.Context, limit int) (int, error) {
	var expired []reservation.Hold
	err := s.pool.BeginFunc(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, announceExpired, limit)
		if err != nil {
			return err
		}
		if expired, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.Hold, error) {
			return scanHold(row)
		}); err != nil {
			return err
		}
		events := s.newEvents()
		for _, h := range expired {
			events.hold(ctx, webhook.HoldExpired, h)
		}
		return events.write(ctx, tx)
	})
	if err != nil {
		return 0, wrap("announce expired holds", err)
	}
	return len(expired), nil
}
