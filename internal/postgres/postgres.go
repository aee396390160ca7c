// Package postgres is the PostgreSQL adapter: the connection pool, the
// embedded schema migrations and the reservation.Repository implementation.
package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultConnectTimeout bounds dialling PostgreSQL when the URL sets no
// connect_timeout, so an unreachable server yields an error, not a hang.
const DefaultConnectTimeout = 3 * time.Second

// DefaultMaxConns is the pool size when the URL sets no pool_max_conns.
// A booking holds its connection while PostgreSQL flushes its commit to the
// WAL; with pgxpool's own default (4 on a small machine) the database idles
// between flushes while requests queue for a connection, and with more,
// concurrent commits share one flush (docs/performance.md, "Batching",
// has the figures for 4, 8 and 16 connections).
const DefaultMaxConns = 8

// Open returns a pool for url (a pgx connection string). It does not wait
// for the server: the first query, or Ping, does.
func Open(ctx context.Context, url string, opts ...PoolOption) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx puts the URL, password included, into parse errors.
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: invalid connection string")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	// DATABASE_URL names a primary and its standbys, and asks for the one
	// that takes writes: new connections wait through a failover.
	if followsPrimary(cfg) {
		withPrimaryGate(cfg, DefaultPrimaryWait)
	}
	for _, o := range opts {
		o(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	return pool, nil
}

// PoolOption tunes a pool that Open makes.
type PoolOption func(*pgxpool.Config)

// WithMaxConns caps the pool at n connections, whatever DATABASE_URL says:
// for a background worker that must never take the requests' connections.
func WithMaxConns(n int32) PoolOption {
	return func(c *pgxpool.Config) { c.MaxConns, c.MinConns = n, 0 }
}

// WithIndexPlans turns sequential scans off on the pool's connections
// (enable_seqscan), so that PostgreSQL reads a table by an index wherever
// one serves, whatever its statistics say: for the relay's pool, whose
// statements all find seat_changes rows by id. That table swings between
// empty and full by design, so statistics taken at any moment can be
// wrong the next, and a plan that reads it whole (chosen while it looked
// empty, and kept by the prepared statement) reads every row still there,
// dead or alive, once per pass.
//
// JIT compilation is turned off with it: a plan with a sequential scan
// left in it (a table with no index to serve, like the few webhook
// endpoints) costs 10^10 when they are off, far past jit_above_cost, and
// PostgreSQL then compiled every statement before running it: 200 ms of
// a 240 ms fan-out read.
func WithIndexPlans() PoolOption {
	return func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["enable_seqscan"] = "off"
		c.ConnConfig.RuntimeParams["jit"] = "off"
	}
}
