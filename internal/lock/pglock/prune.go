package pglock

import (
	"context"
	"time"
)

// pruneSQL deletes the rows that have been free for $1 microseconds or
// more: not held now, and whose lease ended (lock_until) and last
// acquisition (locked_at) both lie that far back. A released row's
// lock_until is '-infinity', so its last acquisition decides; a row held
// with no end ('infinity') never qualifies.
//
// The rows are chosen with FOR UPDATE SKIP LOCKED: Prune never waits for a
// row that an acquire, extension or release is changing. A plain DELETE
// locks its rows in the table's physical order, and waiting there while
// holding rows already deleted would deadlock with a TryAcquireAll taking
// the same names in key order. A row skipped is not free anyway, or is
// pruned next time.
const pruneSQL = `
WITH idle AS (
	SELECT name FROM @table
	WHERE lock_until <= clock_timestamp()
		AND GREATEST(lock_until, locked_at) < clock_timestamp() - $1::bigint * interval '1 microsecond'
	FOR UPDATE SKIP LOCKED
)
DELETE FROM @table AS l
USING idle
WHERE l.name = idle.name`

// Prune deletes the rows of the lock table that have been free for more than
// freeFor (their lease ended, or they were released, that long ago) and
// returns how many, so that the table does not keep a row for every key
// ever locked. It never deletes a held lock, a lock held with no end, or a
// row that another statement is changing (it skips those rather than wait),
// and it never blocks an acquire for longer than its own statement.
//
// Losing a row is safe for fencing: the next acquisition of its name finds
// no row and starts the fence from the database clock in microseconds.
// Every earlier fence of the name was GREATEST(previous + 1, clock in µs at
// its acquisition), so it ran ahead of the clock only by acquisitions
// faster than one a microsecond; after freeFor without one, the clock is
// above them all (as long as the database clock does not go back by more
// than freeFor).
//
// A released row is judged by its last acquisition, since the time of the
// release is not stored: a lock held for longer than freeFor can be pruned
// as soon as it is released, which is safe by the same argument. Errors
// reaching the database wrap backend.ErrUnavailable.
func (b *Backend) Prune(ctx context.Context, freeFor time.Duration) (int64, error) {
	tag, err := b.pool.Exec(ctx, b.sql.prune, freeFor.Microseconds())
	if err != nil {
		return 0, classify("prune", err)
	}
	return tag.RowsAffected(), nil
}
