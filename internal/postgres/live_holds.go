package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A user's live holds are kept in one row of live_holds_by_user, so that
// MAX_HOLDS_PER_USER costs one row a hold however many the user made
// before (counting the user's holds themselves reads every one of them).
// Each statement here is the last of its transaction to take a lock: a
// transaction waiting for the row therefore never holds it while waiting
// for a hold or a claim, and the row adds no deadlock to those the holds'
// and claims' own order already rules out.

// addLiveHold records hold $2, expiring $3 ms after the transaction's
// start (as the hold does), among user $1's live holds, drops the entries
// that have expired by the transaction's clock, and returns how many are
// left, the new one included. The upsert locks the row (or, for a user's
// first hold, waits on the unique key for a concurrent first hold):
// concurrent holds of one user each count the ones committed before them.
const addLiveHold = `
INSERT INTO live_holds_by_user AS u (user_id, holds)
VALUES ($1, jsonb_build_object($2::text, now() + $3 * interval '1 millisecond'))
ON CONFLICT (user_id) DO UPDATE SET holds = (
	SELECT coalesce(jsonb_object_agg(h.key, h.value), '{}')
	FROM jsonb_each(u.holds) AS h
	WHERE (h.value #>> '{}')::timestamptz > now()
) || EXCLUDED.holds
RETURNING (SELECT count(*) FROM jsonb_object_keys(u.holds))`

// forgetLiveHold drops hold $2 from user $1's live holds: it was confirmed
// or released.
const forgetLiveHold = `UPDATE live_holds_by_user SET holds = holds - $2::text WHERE user_id = $1`

// moveLiveHold sets the hold's expiry among its user's live holds: it was
// extended. An entry already dropped as expired by a concurrent hold,
// whose clock ran ahead of the extension's, is put back.
func moveLiveHold(ctx context.Context, tx pgx.Tx, userID string, id uuid.UUID, expiresAt time.Time) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO live_holds_by_user AS u (user_id, holds)
		VALUES ($1, jsonb_build_object($2::text, $3::timestamptz))
		ON CONFLICT (user_id) DO UPDATE SET holds = u.holds || EXCLUDED.holds`, userID, id, expiresAt)
	return err
}
