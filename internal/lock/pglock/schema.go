package pglock

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of the names a Backend uses.
const (
	// DefaultTable is the lock table's name unless WithTable sets another.
	DefaultTable = "locks"
	// DefaultChannel is the NOTIFY channel on which Release announces the
	// name of the lock it released, unless WithChannel sets another.
	DefaultChannel = "lock_released"
)

// maxIdentifier is the longest name PostgreSQL keeps (NAMEDATALEN - 1
// bytes): a longer one is truncated, and a LISTEN on a truncated channel
// would never hear pg_notify, which refuses the full name.
const maxIdentifier = 63

// Option tunes New and Migrate.
type Option func(*options)

type options struct {
	table   string
	channel string
}

// WithTable sets the lock table's name (DefaultTable by default). The name
// is one identifier, used exactly as given (quoted: case matters), in the
// first schema of the connection's search_path; two Backends share locks
// only if they name the same table. It must be 1 to 63 bytes with no NUL.
func WithTable(name string) Option {
	return func(o *options) { o.table = name }
}

// WithChannel sets the NOTIFY channel of release announcements
// (DefaultChannel by default). Only Backends on the same channel wake each
// other's waiters: every process locking on a table must use the same one.
// It must be 1 to 63 bytes with no NUL.
func WithChannel(name string) Option {
	return func(o *options) { o.channel = name }
}

// names are the options checked and quoted for SQL.
type names struct {
	table   string // quoted identifier
	channel string // as given: pg_notify's argument
	listen  string // LISTEN statement of channel, quoted
}

func resolve(opts []Option) (names, error) {
	o := options{table: DefaultTable, channel: DefaultChannel}
	for _, opt := range opts {
		opt(&o)
	}
	table, err := quoteIdentifier("table", o.table)
	if err != nil {
		return names{}, err
	}
	channel, err := quoteIdentifier("channel", o.channel)
	if err != nil {
		return names{}, err
	}
	return names{table: table, channel: o.channel, listen: "LISTEN " + channel}, nil
}

func quoteIdentifier(kind, name string) (string, error) {
	if name == "" || len(name) > maxIdentifier || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("pglock: %s name %q: want 1 to %d bytes and no NUL", kind, name, maxIdentifier)
	}
	return pgx.Identifier{name}.Sanitize(), nil
}

// Schema returns the DDL of a lock table named table: the CREATE TABLE IF
// NOT EXISTS that Migrate runs, for a module that applies its schema with
// its own migration tool. It panics if table is not a valid name (see
// WithTable).
func Schema(table string) string {
	quoted, err := quoteIdentifier("table", table)
	if err != nil {
		panic(err)
	}
	return schema(quoted)
}

// schema is Schema for a quoted table name.
func schema(table string) string {
	return `-- Distributed locks in the style of ShedLock's JDBC provider: one row per
-- lock name, held while lock_until is in the future. Every time is the
-- database's clock, never an application's.
--
-- A release does not delete the row: it sets lock_until to '-infinity' and
-- locked_by to NULL, so that the fence survives and the next holder's is
-- above it. A row deleted (by Prune, or by hand) restarts its fence from the
-- database clock in microseconds, above every fence handed out before.
CREATE TABLE IF NOT EXISTS ` + table + ` (
    name       text        PRIMARY KEY, -- the lock's name and NOTIFY payload
    lock_until timestamptz NOT NULL,    -- held while > clock_timestamp(); '-infinity' once released, 'infinity' held by hand with no end
    locked_at  timestamptz NOT NULL,    -- when the current or last holder acquired it
    locked_by  text,                    -- the holder's random owner token; NULL once released
    fence      bigint      NOT NULL     -- the fencing token of the last acquisition
)`
}

// Migrate creates the lock table (Schema; WithTable names it) in pool's
// database unless it exists, and leaves an existing one as it is. Processes
// starting together may all call it: they take turns on a transaction-level
// advisory lock of the table's name, because concurrent CREATE TABLE IF NOT
// EXISTS statements of one name can fail on the catalog's unique index
// instead of waiting for each other. WithChannel has no effect here.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts ...Option) error {
	n, err := resolve(opts)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The two-key form keeps clear of the single-key advisory locks
		// of migration tools (golang-migrate's among them).
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('pglock.Migrate'), hashtext($1))`, n.table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema(n.table))
		return err
	})
	if err != nil {
		return classify("migrate", err)
	}
	return nil
}
