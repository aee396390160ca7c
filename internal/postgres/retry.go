package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notExecutedPause spaces the tries of a statement that did not run; the
// pool's primaryGate does the waiting for a new primary.
const notExecutedPause = 50 * time.Millisecond

// retryPool is the pool the stores run their statements on. A statement
// that PostgreSQL certainly did not run is sent again on another
// connection: after a switchover or a failover, every idle connection of
// the pool is one the old primary closed, and the first statement on each
// would fail although the new primary is there. Only statements run on
// the pool itself are retried (a single statement, a transaction's BEGIN,
// or a whole transaction run by BeginFunc); a statement inside a
// transaction is not (the transaction failed with it), nor one whose fate
// is unknown (a connection lost while it ran).
type retryPool struct {
	*pgxpool.Pool
	// failover is whether the pool follows a primary among several hosts
	// (target_session_attrs): then a connection that could not be made is
	// tried again, through the pool's primaryGate, as the failover's gap
	// passes. With one server, that server is down: the caller hears so
	// at once.
	failover bool
}

func newRetryPool(pool *pgxpool.Pool) retryPool {
	return retryPool{Pool: pool, failover: followsPrimary(pool.Config())}
}

// notExecuted reports an error that proves the statement did not run and
// that another try may succeed: nothing was sent, the server ended the
// session (shutting down, or a standby promoted or demoted) before the
// statement could commit (PostgreSQL does not report a session's end to a
// client whose commit is under way, it closes the connection), or, in a
// failover pool, no connection could be made.
func (p retryPool) notExecuted(err error) bool {
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &connectErr):
		return p.failover
	case pgconn.SafeToRetry(err):
		return true
	case errors.As(err, &pgErr):
		return pgErr.Severity == "FATAL" && (pgErr.Code == pgerrcode.AdminShutdown || pgErr.Code == pgerrcode.CrashShutdown || pgErr.Code == pgerrcode.CannotConnectNow)
	}
	return false
}

// again runs call until it succeeds, fails otherwise than notExecuted,
// or ctx ends; at most for DefaultPrimaryWait. A session the server ended
// means every connection to it is gone: the pool drops them all (Reset)
// rather than meet each one with a statement.
func (p retryPool) again(ctx context.Context, call func() error) error {
	deadline := time.Now().Add(DefaultPrimaryWait)
	for {
		err := call()
		if err == nil || !p.notExecuted(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			p.Reset()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(notExecutedPause):
		}
	}
}

func (p retryPool) Exec(ctx context.Context, sql string, args ...any) (tag pgconn.CommandTag, err error) {
	err = p.again(ctx, func() error {
		tag, err = p.Pool.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// Query retries only what fails before the rows are returned (a statement
// prepared on a closed connection); an error met while reading the rows is
// the caller's.
func (p retryPool) Query(ctx context.Context, sql string, args ...any) (rows pgx.Rows, err error) {
	err = p.again(ctx, func() error {
		rows, err = p.Pool.Query(ctx, sql, args...)
		return err
	})
	return rows, err
}

func (p retryPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return retryRow{p: p, ctx: ctx, sql: sql, args: args}
}

func (p retryPool) Begin(ctx context.Context) (tx pgx.Tx, err error) {
	err = p.again(ctx, func() error {
		tx, err = p.Pool.Begin(ctx)
		return err
	})
	return tx, err
}

func (p retryPool) BeginTx(ctx context.Context, opts pgx.TxOptions) (tx pgx.Tx, err error) {
	err = p.again(ctx, func() error {
		tx, err = p.Pool.BeginTx(ctx, opts)
		return err
	})
	return tx, err
}

// BeginFunc runs fn in a transaction (pgx.BeginFunc), and the whole
// transaction again when it failed in a way that proves nothing of it
// committed: a switchover's shutdown ends the session under a transaction
// half done (57P01), which PostgreSQL then rolls back. fn must only set
// its results (run again, it sets them anew).
func (p retryPool) BeginFunc(ctx context.Context, fn func(pgx.Tx) error) error {
	return p.again(ctx, func() error { return pgx.BeginFunc(ctx, p.Pool, fn) })
}

// retryRow runs its statement when scanned, again if it did not run.
type retryRow struct {
	p    retryPool
	ctx  context.Context
	sql  string
	args []any
}

func (r retryRow) Scan(dest ...any) error {
	return r.p.again(r.ctx, func() error { return r.p.Pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...) })
}
