package pglock_test

// Pools on a database of each test's own (lockenv.DatabaseURL), with the
// lock table made by Migrate.

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// openPool opens a pool on url, closed when the test ends. It does not
// dial: the first statement does.
func openPool(tb testing.TB, url string) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 3 * time.Second
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// newPool opens a pool on a fresh database of the test's own, with the lock
// table of opts created by Migrate.
func newPool(tb testing.TB, opts ...pglock.Option) *pgxpool.Pool {
	tb.Helper()
	pool := openPool(tb, lockenv.DatabaseURL(tb))
	if err := pglock.Migrate(context.Background(), pool, opts...); err != nil {
		tb.Fatal(err)
	}
	return pool
}
