package pglock

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

var (
	_ backend.Inspector    = (*Backend)(nil)
	_ backend.MultiBackend = (*Backend)(nil)
)

// takeAllSQL is takeRows on its own: in TryAcquireAll's transaction, the
// rows it returns are the keys taken; any key missing is held by another
// owner, and the transaction is rolled back.
const takeAllSQL = takeRows

// heldByOthersSQL lists the keys of $1 that an owner other than $2 holds,
// with the holder's remaining TTL (heldRemaining).
const heldByOthersSQL = `
SELECT name, ` + heldRemaining + `
FROM @table
WHERE name = ANY($1::text[]) AND locked_by IS DISTINCT FROM $2 AND lock_until > clock_timestamp()
ORDER BY ` + byteOrder

// holdsSQL reports, for the keys of $1 that $2 holds, how many there are
// and the smallest remaining TTL (heldRemaining; 0 when every one is held
// with no end).
const holdsSQL = `
SELECT count(*), COALESCE(min(NULLIF(` + heldRemaining + `, 0)), 0)
FROM @table
WHERE name = ANY($1::text[]) AND locked_by = $2 AND lock_until > clock_timestamp()`

// ownRowsInOrder locks the rows of $1 that $2 holds in name order, so that
// statements over overlapping sets of keys (a release racing an acquire or
// another release) always wait for each other in the same order and never
// deadlock; an UPDATE over name = ANY(...) alone locks in no set order.
//
// The order is byteOrder, the order in which lock.Client sorts the keys and
// TryAcquireAll therefore takes them, not the column's collation: under a
// linguistic collation (en_US.UTF-8, the default of many installations)
// "a" sorts before "B", and a release locking in that order would deadlock
// with an acquire of the same keys locking in the caller's.
const ownRowsInOrder = `
	SELECT name FROM @table
	WHERE name = ANY($1::text[]) AND locked_by = $2 AND lock_until > clock_timestamp()
	ORDER BY ` + byteOrder + `
	FOR UPDATE`

// byteOrder orders lock names byte by byte, as Go's sort.Strings does: the
// "C" collation compares with memcmp whatever the database's default.
const byteOrder = `name COLLATE "C"`

// extendAllSQL is extendSQL for every key of $1.
const extendAllSQL = `
WITH own AS (` + ownRowsInOrder + `)
UPDATE @table AS l
SET lock_until = clock_timestamp() + $3::bigint * interval '1 microsecond'
FROM own
WHERE l.name = own.name AND l.locked_by = $2 AND l.lock_until > clock_timestamp()`

// releaseAllSQL is releaseSQL for every key of $1: one notification on
// channel $3 per key released.
const releaseAllSQL = `
WITH own AS (` + ownRowsInOrder + `),
released AS (
	UPDATE @table AS l
	SET lock_until = '-infinity', locked_by = NULL
	FROM own
	WHERE l.name = own.name AND l.locked_by = $2 AND l.lock_until > clock_timestamp()
	RETURNING l.name
)
SELECT pg_notify($3, name) FROM released`

// Holds implements backend.Inspector in one statement.
func (b *Backend) Holds(ctx context.Context, key, token string) (time.Duration, bool, error) {
	return b.HoldsAll(ctx, []string{key}, token)
}

// HoldsAll implements backend.MultiBackend in one statement.
func (b *Backend) HoldsAll(ctx context.Context, keys []string, token string) (time.Duration, bool, error) {
	var n, remaining int64
	if err := b.pool.QueryRow(ctx, b.sql.holds, keys, token).Scan(&n, &remaining); err != nil {
		return 0, false, classify("holds", err)
	}
	if n != int64(len(keys)) {
		return 0, false, nil
	}
	return micros(remaining), true, nil
}

// TryAcquireAll implements backend.MultiBackend in one transaction: it takes
// every free key (and renews those token already holds) in key order, and
// commits only if that was all of them. Otherwise it rolls back, taking
// none, and reports the keys held by others. Keys come sorted (lock.Client
// sorts them), so concurrent overlapping sets lock their rows in the same
// order and never deadlock.
func (b *Backend) TryAcquireAll(ctx context.Context, keys []string, token string, ttl time.Duration) (backend.MultiGrant, error) {
	for attempt := 0; ; attempt++ {
		fences, err := b.takeAll(ctx, keys, token, ttl)
		if err != nil {
			return backend.MultiGrant{}, classify("acquire", err)
		}
		if fences != nil {
			return backend.MultiGrant{Acquired: true, Fences: fences}, nil
		}
		held, err := b.heldByOthers(ctx, keys, token)
		if err != nil {
			return backend.MultiGrant{}, classify("acquire", err)
		}
		// Nobody holds them any more: the holders released between the
		// two statements. Try once more, then let the caller look again.
		if len(held) > 0 || attempt > 0 {
			return backend.MultiGrant{Held: held}, nil
		}
	}
}

// takeAll returns the fences of keys in order if it took every one, nil if
// it took none because some key is held.
func (b *Backend) takeAll(ctx context.Context, keys []string, token string, ttl time.Duration) ([]int64, error) {
	var fences []int64
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, b.sql.takeAll, keys, token, ttl.Microseconds())
		if err != nil {
			return err
		}
		byKey := make(map[string]int64, len(keys))
		var name string
		var fence int64
		if _, err := pgx.ForEachRow(rows, []any{&name, &fence}, func() error {
			byKey[name] = fence
			return nil
		}); err != nil {
			return err
		}
		if len(byKey) != len(keys) {
			return errPartial
		}
		fences = make([]int64, len(keys))
		for i, k := range keys {
			fences[i] = byKey[k]
		}
		return nil
	})
	if errors.Is(err, errPartial) {
		return nil, nil
	}
	return fences, err
}

// errPartial rolls back a transaction that could not take every key.
var errPartial = errors.New("pglock: some keys are held")

func (b *Backend) heldByOthers(ctx context.Context, keys []string, token string) ([]backend.KeyHeld, error) {
	rows, err := b.pool.Query(ctx, b.sql.heldByOthers, keys, token)
	if err != nil {
		return nil, err
	}
	var held []backend.KeyHeld
	var name string
	var remaining int64
	_, err = pgx.ForEachRow(rows, []any{&name, &remaining}, func() error {
		held = append(held, backend.KeyHeld{Key: name, Remaining: micros(max(remaining, 0))})
		return nil
	})
	return held, err
}

// ExtendAll implements backend.MultiBackend in one statement.
func (b *Backend) ExtendAll(ctx context.Context, keys []string, token string, ttl time.Duration) (bool, error) {
	tag, err := b.pool.Exec(ctx, b.sql.extendAll, keys, token, ttl.Microseconds())
	if err != nil {
		return false, classify("extend", err)
	}
	return tag.RowsAffected() == int64(len(keys)), nil
}

// ReleaseAll implements backend.MultiBackend in one statement, notifying
// the Backend's channel once for each key it released.
func (b *Backend) ReleaseAll(ctx context.Context, keys []string, token string) (int, error) {
	tag, err := b.pool.Exec(ctx, b.sql.releaseAll, keys, token, b.channel)
	if err != nil {
		return 0, classify("release", err)
	}
	return int(tag.RowsAffected()), nil
}
