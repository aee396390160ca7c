package postgres_test

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/pglock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/migrations"
)

func schemaVersion(t *testing.T, pool *pgxpool.Pool) (version int64, dirty bool) {
	t.Helper()
	err := pool.QueryRow(testContext(t), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	return version, dirty
}

// latestVersion is the number of the newest up migration embedded in the
// binary, read from migrations.FS so that adding a migration does not need
// this test to change; it is at least 2, the seat fences.
var latestVersion = func() int64 {
	files, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil {
		panic(err)
	}
	var latest int64
	for _, f := range files {
		prefix, _, _ := strings.Cut(f, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			panic(fmt.Sprintf("migration %s: no version prefix: %v", f, err))
		}
		latest = max(latest, v)
	}
	return latest
}()

// tables are those the adapter's SQL uses.
var tables = []string{"schedules", "reservations", "seat_fences"}

func TestLatestVersionIncludesSeatFences(t *testing.T) {
	t.Parallel()
	if latestVersion < 2 {
		t.Fatalf("newest embedded migration = %d, want at least 2 (0002_seat_fences)", latestVersion)
	}
	if _, err := fs.Stat(migrations.FS, "0002_seat_fences.up.sql"); err != nil {
		t.Errorf("0002_seat_fences.up.sql not embedded: %v", err)
	}
}

func TestMigrateFromEmptyDatabaseThenNoOp(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, table := range append([]string{"schema_migrations"}, tables...) {
		if lockenv.TableExists(t, pool, table) {
			t.Fatalf("table %s exists before Migrate: the database is not empty", table)
		}
	}

	if err := postgres.Migrate(pool); err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	for _, table := range tables {
		if !lockenv.TableExists(t, pool, table) {
			t.Errorf("table %s missing after Migrate", table)
		}
	}
	if v, dirty := schemaVersion(t, pool); v != latestVersion || dirty {
		t.Errorf("schema version = %d dirty=%v, want %d clean", v, dirty, latestVersion)
	}
	// The adapter maps violations by constraint name; the schema must keep
	// every name it maps.
	for _, c := range []struct{ name, kind string }{
		{"reservations_schedule_id_fkey", "f"},
		{"seat_fences_schedule_id_fkey", "f"},
		{"seat_fences_seat_id_check", "c"},
	} {
		var constraint int
		err = pool.QueryRow(testContext(t),
			`SELECT count(*) FROM pg_constraint WHERE conname = $1 AND contype = $2`, c.name, c.kind).Scan(&constraint)
		if err != nil || constraint != 1 {
			t.Errorf("constraint %s (type %s): found %d (%v), want 1", c.name, c.kind, constraint, err)
		}
	}

	if !lockenv.TableExists(t, pool, "reservations_active_seat_key") {
		t.Error("unique index reservations_active_seat_key missing: the adapter maps its violations by name")
	}

	store := postgres.NewStore(pool)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 1, "alice")

	if err := postgres.Migrate(pool); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if v, dirty := schemaVersion(t, pool); v != latestVersion || dirty {
		t.Errorf("schema version after second Migrate = %d dirty=%v, want %d clean", v, dirty, latestVersion)
	}
	if n := countReservations(t, pool, s.ID()); n != 1 {
		t.Errorf("reservations after second Migrate = %d, want the 1 stored before: Migrate must be a no-op", n)
	}
	// The pool stays usable: Migrate must not close it.
	if err := store.Ping(testContext(t)); err != nil {
		t.Errorf("Ping after Migrate: %v", err)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := lockenv.DatabaseURL(t)
	const instances = 5
	pools := make([]*pgxpool.Pool, instances)
	for i := range pools {
		pool, err := postgres.Open(testContext(t), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		pools[i] = pool
	}

	start := make(chan struct{})
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i, pool := range pools {
		wg.Go(func() {
			<-start
			errs[i] = postgres.Migrate(pool)
		})
	}
	close(start)
	wg.Wait()

	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: Migrate: %v", i, err)
		}
	}
	if v, dirty := schemaVersion(t, pools[0]); v != latestVersion || dirty {
		t.Errorf("schema version = %d dirty=%v, want %d clean", v, dirty, latestVersion)
	}
	store := postgres.NewStore(pools[instances-1])
	s := mustSchedule(t, store, 1)
	mustReserve(t, store, s.ID(), 1, "alice")
}

// The migrations' lock table is the one pglock describes (pglock.Schema,
// created by pglock.Migrate): the lock backend's SQL is written for that
// table, so a change to one without the other fails here. Both are created
// in one database, the migrations' as "locks", pglock's under another name,
// and compared from the catalog.
func TestLocksMigrationIsPglockSchema(t *testing.T) {
	t.Parallel()
	pool := testenv.Pool(t)
	const mirror = "locks_by_pglock"
	if err := pglock.Migrate(testContext(t), pool, pglock.WithTable(mirror)); err != nil {
		t.Fatal(err)
	}
	migrated, described := describeTable(t, pool, "locks"), describeTable(t, pool, mirror)
	if len(migrated) < 5 {
		t.Fatalf("locks described as %q: columns missing", migrated)
	}
	if !slices.Equal(migrated, described) {
		t.Errorf("the migrations' locks table and pglock.Schema differ:\nmigrations: %q\npglock:     %q", migrated, described)
	}
}

// describeTable lists what a table's DDL decides, without its name:
// persistence, columns in order (type, nullability, default, collation),
// constraints and indexes.
func describeTable(t *testing.T, pool *pgxpool.Pool, table string) []string {
	t.Helper()
	var lines []string
	for _, query := range []string{
		`SELECT format('table persistence=%s kind=%s', relpersistence, relkind) FROM pg_class WHERE oid = $1::regclass`,
		`SELECT format('column %s %s not-null=%s default=%s collation=%s', a.attname,
			format_type(a.atttypid, a.atttypmod), a.attnotnull,
			coalesce(pg_get_expr(d.adbin, d.adrelid), '-'), coalesce(c.collname, '-'))
		FROM pg_attribute a
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		LEFT JOIN pg_collation c ON c.oid = a.attcollation
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`,
		`SELECT format('constraint %s %s', contype, pg_get_constraintdef(oid))
		FROM pg_constraint WHERE conrelid = $1::regclass ORDER BY 1`,
		`SELECT format('index unique=%s primary=%s %s', indisunique, indisprimary,
			regexp_replace(pg_get_indexdef(indexrelid), '^.* USING ', ''))
		FROM pg_index WHERE indrelid = $1::regclass ORDER BY 1`,
	} {
		rows, err := pool.Query(testContext(t), query, pgx.Identifier{table}.Sanitize())
		if err != nil {
			t.Fatalf("describe %s: %v", table, err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("describe %s: %v", table, err)
		}
		lines = append(lines, found...)
	}
	return lines
}
