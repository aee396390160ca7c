package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pgStatSettle is how long the hammer waits before it reads the
// statistics: a PostgreSQL backend publishes its counts when it goes idle
// at least a second after it last did, else 10 s later
// (PGSTAT_IDLE_INTERVAL), so a connection of the service's pool that fell
// idle at the end of a phase may keep the phase's last second to itself
// that long. A variable for the tests, whose connections publish as they
// close.
var pgStatSettle = 11 * time.Second

// pgStats reads the rows PostgreSQL has read in one database: the service's
// (-database-url), over one connection of its own.
type pgStats struct {
	pool     *pgxpool.Pool
	database string
}

// openPGStats connects to url's database (a URL or key=value string as
// the service's DATABASE_URL, pool_* settings included).
func openPGStats(ctx context.Context, url string) (*pgStats, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message would quote the URL, password and all.
		return nil, fmt.Errorf("-database-url: not a PostgreSQL URL")
	}
	cfg.MinConns, cfg.MaxConns = 0, 1
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	p := &pgStats{pool: pool}
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&p.database); err != nil {
		pool.Close()
		return nil, fmt.Errorf("-database-url: %w", err)
	}
	return p, nil
}

func (p *pgStats) close() {
	if p != nil {
		p.pool.Close()
	}
}

// rowsRead is tup_returned + tup_fetched of the database, read after
// pgStatSettle: every row its sequential scans returned and its index
// scans fetched since the statistics were last reset.
func (p *pgStats) rowsRead(ctx context.Context) (int64, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(pgStatSettle):
	}
	var n int64
	err := p.pool.QueryRow(ctx, "SELECT tup_returned + tup_fetched FROM pg_stat_database WHERE datname = current_database()").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read pg_stat_database: %w", err)
	}
	return n, nil
}

// pgRows is what PostgreSQL read during a phase: the delta of
// tup_returned + tup_fetched of the service's database, and that per
// hold the phase made.
type pgRows struct {
	RowsRead    int64   `json:"rowsRead"`
	RowsPerHold float64 `json:"rowsPerHold"`
}

// pgMeter measures the rows read between its start and stop (nil when
// there is nothing to measure with: the figure is left out).
type pgMeter struct {
	stats  *pgStats
	before int64
	err    error
}

// start reads the count a phase starts from.
func (m *pgMeter) start(ctx context.Context) {
	if m == nil {
		return
	}
	m.before, m.err = m.stats.rowsRead(ctx)
}

// stop reads the count the phase ended with and returns the phase's rows
// per hold; nil and the error when either read failed.
func (m *pgMeter) stop(ctx context.Context, holds int) (*pgRows, error) {
	if m == nil {
		return nil, nil
	}
	if m.err != nil {
		return nil, m.err
	}
	after, err := m.stats.rowsRead(ctx)
	if err != nil {
		return nil, err
	}
	r := &pgRows{RowsRead: after - m.before}
	if holds > 0 {
		r.RowsPerHold = float64(r.RowsRead) / float64(holds)
	}
	return r, nil
}
