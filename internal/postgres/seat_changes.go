package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/reservation"
)

// SeatChanges reads and trims the seat_changes outbox, which the writes of
// Store fill in their own transactions.
type SeatChanges struct {
	pool retryPool
}

// NewSeatChanges returns the outbox on pool.
func NewSeatChanges(pool *pgxpool.Pool) *SeatChanges { return &SeatChanges{pool: newRetryPool(pool)} }

// Pending returns the changes of up to limit of the oldest pending rows, in
// position (id) order, one for each seat: a row of several seats (a hold's
// seats changed by one statement) gives each of them a change, in seat
// order, all at the row's position.
func (c *SeatChanges) Pending(ctx context.Context, limit int) ([]reservation.SeatChange, error) {
	rows, err := c.pool.Query(ctx, `
		SELECT c.id, c.schedule_id, s.seat, c.status, c.created_at
		FROM (SELECT id, schedule_id, seat_id, seat_ids, status, created_at FROM seat_changes ORDER BY id LIMIT $1) c
		CROSS JOIN LATERAL unnest(coalesce(c.seat_ids, ARRAY[c.seat_id])) WITH ORDINALITY AS s(seat, n)
		ORDER BY c.id, s.n`, limit)
	if err != nil {
		return nil, wrap("pending seat changes", err)
	}
	changes, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (reservation.SeatChange, error) {
		var (
			sc     reservation.SeatChange
			status string
		)
		err := row.Scan(&sc.Pos, &sc.ScheduleID, &sc.SeatID, &status, &sc.CreatedAt)
		sc.Status = reservation.SeatStatus(status)
		return sc, err
	})
	if err != nil {
		return nil, wrap("pending seat changes", err)
	}
	return changes, nil
}

// Delete removes the relayed changes ids; ids already gone are ignored.
func (c *SeatChanges) Delete(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := c.pool.Exec(ctx, `DELETE FROM seat_changes WHERE id = ANY($1)`, ids); err != nil {
		return wrap("delete seat changes", err)
	}
	return nil
}

// exactBacklogUpTo is the backlog Backlog counts row by row; past it, the
// span of ids stands for the count.
const exactBacklogUpTo = 100_000

// Backlog is the outbox's pending changes: how many, and the age of the
// oldest by PostgreSQL's clock (zero when none is pending). Rows are
// counted exactly up to 100,000; past that, the count is the span of the
// pending ids, an upper bound (ids of rolled back writes leave gaps), so
// the answer stays cheap however large the backlog grows.
func (c *SeatChanges) Backlog(ctx context.Context) (rows int64, oldest time.Duration, err error) {
	var (
		counted     int64
		first, last *int64
		age         *float64
	)
	err = c.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM (SELECT 1 FROM seat_changes LIMIT $1) capped),
		       (SELECT min(id) FROM seat_changes),
		       (SELECT max(id) FROM seat_changes),
		       (SELECT extract(epoch FROM clock_timestamp() - created_at)::float8
		          FROM seat_changes ORDER BY id LIMIT 1)`, exactBacklogUpTo).Scan(&counted, &first, &last, &age)
	if err != nil {
		return 0, 0, wrap("seat changes backlog", err)
	}
	rows = counted
	if counted >= exactBacklogUpTo && first != nil && last != nil {
		rows = max(counted, *last-*first+1)
	}
	if age != nil && *age > 0 {
		oldest = time.Duration(*age * float64(time.Second))
	}
	return rows, oldest, nil
}

// dropChunk is how many rows one statement of Trim deletes at most, so
// that no transaction of it grows large.
const dropChunk = 50_000

// Trim enforces a bound on the outbox: when more than keep changes are
// pending, it deletes the oldest until keep are left, and returns how many
// it deleted. Those changes never reach the live seat map: the bound is
// for a relay stopped so long that the disk would fill.
func (c *SeatChanges) Trim(ctx context.Context, keep int64) (int64, error) {
	if keep < 0 {
		keep = 0
	}
	// The oldest id kept: the keep-th newest. Rows written meanwhile only
	// make fewer than keep older ones remain, never more.
	var cut *int64
	if keep > 0 {
		err := c.pool.QueryRow(ctx, `SELECT id FROM seat_changes ORDER BY id DESC OFFSET $1 LIMIT 1`, keep-1).Scan(&cut)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return 0, nil // at most keep pending
		case err != nil:
			return 0, wrap("trim seat changes", err)
		}
	} else {
		err := c.pool.QueryRow(ctx, `SELECT max(id) + 1 FROM seat_changes`).Scan(&cut)
		if err != nil {
			return 0, wrap("trim seat changes", err)
		}
		if cut == nil {
			return 0, nil
		}
	}
	var dropped int64
	for {
		tag, err := c.pool.Exec(ctx, `
			DELETE FROM seat_changes WHERE id IN (
				SELECT id FROM seat_changes WHERE id < $1 ORDER BY id LIMIT $2)`, *cut, dropChunk)
		if err != nil {
			return dropped, wrap("trim seat changes", err)
		}
		dropped += tag.RowsAffected()
		if tag.RowsAffected() < dropChunk {
			return dropped, nil
		}
	}
}
