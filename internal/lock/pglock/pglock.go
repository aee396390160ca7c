// Package pglock is the PostgreSQL adapter of the lock port: a backend.Backend
// on one table (DefaultTable, "locks", unless WithTable names another; its
// DDL is Schema, and Migrate creates it), in the style of ShedLock's JDBC
// provider.
//
// A lock is one row per name, held while its lock_until is in the future;
// locked_by is the holder's random owner token and locked_at the time of the
// acquisition. Every time is read from the database's clock
// (clock_timestamp()), never from an application's, so processes whose clocks
// disagree still agree on who holds a lock.
//
// TryAcquire is one INSERT ... ON CONFLICT DO UPDATE ... WHERE lock_until <=
// clock_timestamp() OR locked_by = the token: it creates the row, takes over
// an expired or released one, or renews one the same token already holds
// (a retried acquire whose first reply was lost: same fence), and mints the
// fence in the same statement. TryAcquireAll does the same for several rows
// in one transaction, in name order, and commits only when it got them all. The fence of a taken-over
// row is GREATEST(fence + 1, database clock in µs); a new row (a name never
// locked, or a row deleted by hand) starts from the database clock in
// microseconds, as the Redis adapter's counter starts from the Redis clock, so
// fences stay comparable across the two stores and keep growing when rows are
// lost (as long as the database clock does not go back).
//
// Release is owner-checked and keeps the row, and with it the fence: it sets
// lock_until to -infinity and locked_by to NULL, and in the same statement
// sends pg_notify on the Backend's channel (DefaultChannel unless
// WithChannel sets another) with the lock's name as payload. PostgreSQL
// delivers it when the release commits. Waiters are woken through one LISTEN
// connection per Backend (see Subscribe).
//
// The Backend does not seal (it is no backend.Sealer): a lease's Seal or SealWithNote releases the key, so
// no Acquire ever reports lock.ErrSealed or a seal's note from it.
//
// Lock names are the NOTIFY payload and the primary key, so they must be
// short: under 8000 bytes for NOTIFY, and well under 2700 for the index. The
// listening connection needs a real session: a PgBouncer in transaction
// pooling mode in front of PostgreSQL would drop its LISTEN.
package pglock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// The statements below are templates: @table stands for the Backend's lock
// table, quoted, and New fills it in once (see statements). The channel of
// pg_notify is a parameter, so that no name is ever spliced into SQL as a
// string literal.

// heldRemaining is, for a row of the lock table, the holder's remaining TTL in
// microseconds: at least 1 while the lock is held, 0 when it is held with no
// end (lock_until = 'infinity', set by hand: the remaining TTL is unknown),
// and -1 when it is not held.
const heldRemaining = `CASE
		WHEN lock_until = 'infinity' THEN 0
		WHEN lock_until > clock_timestamp()
			THEN GREATEST((extract(epoch FROM lock_until - clock_timestamp()) * 1000000)::bigint, 1)
		ELSE -1
	END`

// takeRows is the INSERT shared by single and multi-key acquires: for each
// name it creates the row, takes over one whose lease has ended, or renews
// one that the same owner token already holds (a retried acquire whose
// first reply was lost), and returns the name and its fence. A renewal keeps
// the fence; a new holder gets GREATEST(fence + 1, database clock in µs). A
// row held by another token is left alone (and not returned). Rows are
// taken in the order of the names, which callers sort, so that two
// overlapping sets never wait on each other in a cycle.
const takeRows = `
	INSERT INTO @table AS l (name, lock_until, locked_at, locked_by, fence)
	SELECT k.name, c.t + $3::bigint * interval '1 microsecond', c.t, $2::text,
		(extract(epoch FROM c.t) * 1000000)::bigint
	FROM unnest($1::text[]) WITH ORDINALITY AS k(name, ord), (SELECT clock_timestamp() AS t) AS c
	ORDER BY k.ord
	ON CONFLICT (name) DO UPDATE
	SET lock_until = EXCLUDED.lock_until,
		locked_at  = CASE WHEN ` + ownLive + ` THEN l.locked_at ELSE EXCLUDED.locked_at END,
		locked_by  = EXCLUDED.locked_by,
		fence      = CASE WHEN ` + ownLive + ` THEN l.fence ELSE GREATEST(l.fence + 1, EXCLUDED.fence) END
	WHERE l.lock_until <= clock_timestamp() OR l.locked_by = EXCLUDED.locked_by
	RETURNING l.name, l.fence`

// ownLive is true, in takeRows' conflict branch, for a row that the acquiring
// token holds and whose lease has not ended.
const ownLive = `(l.locked_by = EXCLUDED.locked_by AND l.lock_until > clock_timestamp())`

// acquireSQL takes $1 for owner $2 for $3 microseconds, in one statement.
//
// The INSERT (takeRows) creates, takes over or renews the row and returns
// its fence. When it does none of these, the lock is held and the second
// branch reports the holder's remaining TTL from the statement's snapshot.
// That snapshot predates the INSERT's wait for a concurrent acquirer, so it
// can miss a row inserted or taken over by a transaction that committed
// meanwhile (no row, or -1): TryAcquire then reads the row again.
const acquireSQL = `
WITH acquired AS (` + takeRows + `
)
SELECT true, fence FROM acquired
UNION ALL
SELECT false, ` + heldRemaining + `
FROM @table
WHERE name = ($1::text[])[1] AND NOT EXISTS (SELECT FROM acquired)`

// remainingSQL reads the holder's remaining TTL of $1 afresh (heldRemaining).
const remainingSQL = `SELECT ` + heldRemaining + ` FROM @table WHERE name = $1`

// extendSQL sets $1's lease to $3 microseconds from now if $2 still holds it.
const extendSQL = `
UPDATE @table
SET lock_until = clock_timestamp() + $3::bigint * interval '1 microsecond'
WHERE name = $1 AND locked_by = $2 AND lock_until > clock_timestamp()`

// releaseSQL ends $1's lease if $2 still holds it, keeping the row and its
// fence, and notifies channel $3 in the same statement (delivered on
// commit). It returns one row if it released, none otherwise.
const releaseSQL = `
WITH released AS (
	UPDATE @table
	SET lock_until = '-infinity', locked_by = NULL
	WHERE name = $1 AND locked_by = $2 AND lock_until > clock_timestamp()
	RETURNING name
)
SELECT pg_notify($3, name) FROM released`

// statements are the SQL of one Backend, on its table.
type statements struct {
	acquire, remaining, extend, release                 string
	takeAll, heldByOthers, holds, extendAll, releaseAll string
	prune                                               string
}

func newStatements(table string) statements {
	r := strings.NewReplacer("@table", table)
	return statements{
		acquire:      r.Replace(acquireSQL),
		remaining:    r.Replace(remainingSQL),
		extend:       r.Replace(extendSQL),
		release:      r.Replace(releaseSQL),
		takeAll:      r.Replace(takeAllSQL),
		heldByOthers: r.Replace(heldByOthersSQL),
		holds:        r.Replace(holdsSQL),
		extendAll:    r.Replace(extendAllSQL),
		releaseAll:   r.Replace(releaseAllSQL),
		prune:        r.Replace(pruneSQL),
	}
}

// Backend implements backend.Backend on PostgreSQL. It is safe for concurrent
// use. Close it to end its LISTEN connection.
type Backend struct {
	pool     *pgxpool.Pool
	sql      statements
	channel  string
	listener *listener
}

var _ backend.Backend = (*Backend)(nil)

// New returns a Backend that keeps locks in pool's database, in the table
// DefaultTable or the one WithTable names, which must exist (Migrate
// creates it), and announces releases on DefaultChannel or the one
// WithChannel names. Lock statements run on pool's connections. Waiting
// (Subscribe) uses one more connection of the Backend's own, opened with
// pool's connection settings on the first Subscribe and kept until Close; it
// does not count against pool's MaxConns, so waiters are woken even when lock
// holders use up the pool.
//
// New panics if a name is not valid (see WithTable and WithChannel): names
// are fixed by the program, and Migrate reports the same mistake as an error.
func New(pool *pgxpool.Pool, opts ...Option) *Backend {
	n, err := resolve(opts)
	if err != nil {
		panic(err)
	}
	return &Backend{
		pool:     pool,
		sql:      newStatements(n.table),
		channel:  n.channel,
		listener: newListener(pool.Config().ConnConfig, n),
	}
}

// Close ends the LISTEN connection and its goroutine, and waits for them.
// Subscriptions then receive nothing more and Subscribe fails; the other
// methods keep working while the pool is open. Close is idempotent and always
// returns nil.
func (b *Backend) Close() error {
	b.listener.close()
	return nil
}

// TryAcquire implements backend.Backend. When the lock is free, expired or
// released it is taken in one statement (one round trip once pgx has prepared
// it on the connection), with a fence strictly greater than every earlier
// fence of key. When it is held, Grant.Remaining is the holder's remaining
// TTL by the database clock, or zero when the row has no end (lock_until set
// to 'infinity' by hand); that costs a second query only when the holder's
// row changed while the statement ran.
func (b *Backend) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	for attempt := 0; ; attempt++ {
		var acquired bool
		var value int64
		err := b.pool.QueryRow(ctx, b.sql.acquire, []string{key}, token, ttl.Microseconds()).Scan(&acquired, &value)
		switch {
		case err == nil && acquired:
			return backend.Grant{Acquired: true, Fence: value}, nil
		case err == nil && value >= 0:
			return backend.Grant{Remaining: micros(value)}, nil
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return backend.Grant{}, classify("acquire", err)
		}
		// Not taken, yet the statement's snapshot does not show a holder:
		// the row changed under it. Read it again.
		err = b.pool.QueryRow(ctx, b.sql.remaining, key).Scan(&value)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			value = -1
		case err != nil:
			return backend.Grant{}, classify("acquire", err)
		}
		if value >= 0 {
			return backend.Grant{Remaining: micros(value)}, nil
		}
		// The holder released between the two statements. Try once more,
		// then report a holder of unknown TTL rather than spin.
		if attempt > 0 {
			return backend.Grant{}, nil
		}
	}
}

func micros(n int64) time.Duration { return time.Duration(n) * time.Microsecond }

// Extend implements backend.Backend: it sets key's lock_until to the database
// clock plus ttl if token holds key and its lease has not ended. It returns
// false, changing nothing, when the lease expired, was released, or belongs
// to someone else.
func (b *Backend) Extend(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	tag, err := b.pool.Exec(ctx, b.sql.extend, key, token, ttl.Microseconds())
	if err != nil {
		return false, classify("extend", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release implements backend.Backend: if token holds key and its lease has not
// ended, it ends the lease (lock_until '-infinity', locked_by NULL), keeping
// the row and its fence, and notifies the Backend's channel with key in the same
// statement, which wakes the subscribers of key in every process when it
// commits. It returns false, changing nothing and waking no one, otherwise.
func (b *Backend) Release(ctx context.Context, key, token string) (bool, error) {
	tag, err := b.pool.Exec(ctx, b.sql.release, key, token, b.channel)
	if err != nil {
		return false, classify("release", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Subscribe implements backend.Backend. All subscriptions of a Backend share one
// connection that LISTENs on the Backend's channel; it is opened by the first
// Subscribe and reopened (with backoff) whenever it fails. Subscribe returns
// once that connection's LISTEN has been confirmed, so a release that commits
// after Subscribe returned is delivered. If the connection is lost later, the
// releases missed until it is back cannot be told apart, so every
// subscription receives a wake-up once it is listening again.
//
// When the connection cannot be opened, Subscribe fails with an error
// wrapping backend.ErrUnavailable; when ctx ends first, with ctx's error.
func (b *Backend) Subscribe(ctx context.Context, key string) (backend.Subscription, error) {
	s, err := b.listener.subscribe(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("pglock: subscribe: %w", err)
	}
	return s, nil
}
