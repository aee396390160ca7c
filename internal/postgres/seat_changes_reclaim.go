package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Reclaim vacuums seat_changes: the rows the relay deleted become free
// space again, their index entries go, and the table's statistics are
// taken afresh. Every booking inserts a row that the relay deletes soon
// after, so between autovacuum's visits (a minute apart at the least) the
// dead rows of a busy minute pile up, and every read of the oldest pending
// changes steps over all of them. The relay calls it after each
// seatfeed.DefaultRelayReclaimEvery deletions, which keeps the table a few
// pages long.
//
// An autovacuum already at work on the table makes it skip this time
// rather than wait. VACUUM needs the table's owner (or a superuser): for another role
// PostgreSQL skips the table with a warning, and autovacuum alone keeps it
// (migration 0011 sets its thresholds for this table).
func (c *SeatChanges) Reclaim(ctx context.Context) error {
	// VACUUM cannot run in a transaction, nor as a prepared statement.
	if _, err := c.pool.Exec(ctx, `VACUUM (SKIP_LOCKED) seat_changes`, pgx.QueryExecModeSimpleProtocol); err != nil {
		return wrap("vacuum seat changes", err)
	}
	return nil
}
