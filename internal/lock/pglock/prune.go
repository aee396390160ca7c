package pglock

import (
	"context"
	"time"
)

// pruneSQL deletes the rows of $1 microseconds or more ago: not held now,
// and last acquired (locked_at) at least that long ago. Rows held with no
// end ('infinity') are held, so never deleted.
const pruneSQL = `
DELETE FROM locks
WHERE lock_until <= clock_timestamp()
	AND locked_at < clock_timestamp() - $1::bigint * interval '1 microsecond'`

// Prune deletes the rows of locks that are free and were last acquired more
// than idleFor ago, and returns how many, so that the table does not keep a
// row for every seat ever locked. It never touches a held lock. Losing a row
// is safe: the next acquisition of its name restarts the fence from the
// database clock in microseconds, above every fence handed out before (as
// long as the database clock does not go back by more than idleFor).
func (b *Backend) Prune(ctx context.Context, idleFor time.Duration) (int64, error) {
	tag, err := b.pool.Exec(ctx, pruneSQL, idleFor.Microseconds())
	if err != nil {
		return 0, classify("prune", err)
	}
	return tag.RowsAffected(), nil
}
