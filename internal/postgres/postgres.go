// Package postgres is the PostgreSQL adapter: the connection pool, the
// embedded schema migrations and the reservation.Repository implementation.
package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultConnectTimeout bounds dialling PostgreSQL when the URL sets no
// connect_timeout, so an unreachable server yields an error, not a hang.
const DefaultConnectTimeout = 3 * time.Second

// Open returns a pool for url (a pgx connection string). It does not wait
// for the server: the first query, or Ping, does.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx puts the URL, password included, into parse errors.
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: invalid connection string")
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	return pool, nil
}
