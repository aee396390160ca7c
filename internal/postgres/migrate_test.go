package postgres_test

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
)

func tableExists(t *testing.T, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var exists bool
	if err := pool.QueryRow(testContext(t), `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil {
		t.Fatalf("look up table %s: %v", name, err)
	}
	return exists
}

func schemaVersion(t *testing.T, pool *pgxpool.Pool) (version int64, dirty bool) {
	t.Helper()
	err := pool.QueryRow(testContext(t), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	return version, dirty
}

func TestMigrateFromEmptyDatabaseThenNoOp(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), testenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, table := range []string{"schedules", "reservations", "schema_migrations"} {
		if tableExists(t, pool, table) {
			t.Fatalf("table %s exists before Migrate: the database is not empty", table)
		}
	}

	if err := postgres.Migrate(pool); err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	for _, table := range []string{"schedules", "reservations"} {
		if !tableExists(t, pool, table) {
			t.Errorf("table %s missing after Migrate", table)
		}
	}
	if v, dirty := schemaVersion(t, pool); v != 1 || dirty {
		t.Errorf("schema version = %d dirty=%v, want 1 clean", v, dirty)
	}
	// The adapter maps violations by constraint name; the schema must keep it.
	var constraint int
	err = pool.QueryRow(testContext(t),
		`SELECT count(*) FROM pg_constraint WHERE conname = 'reservations_schedule_seat_key' AND contype = 'u'`).Scan(&constraint)
	if err != nil || constraint != 1 {
		t.Errorf("UNIQUE constraint reservations_schedule_seat_key: found %d (%v), want 1", constraint, err)
	}

	store := postgres.NewStore(pool)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 1, "alice")

	if err := postgres.Migrate(pool); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if v, dirty := schemaVersion(t, pool); v != 1 || dirty {
		t.Errorf("schema version after second Migrate = %d dirty=%v, want 1 clean", v, dirty)
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
	url := testenv.DatabaseURL(t)
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
	if v, dirty := schemaVersion(t, pools[0]); v != 1 || dirty {
		t.Errorf("schema version = %d dirty=%v, want 1 clean", v, dirty)
	}
	store := postgres.NewStore(pools[instances-1])
	s := mustSchedule(t, store, 1)
	mustReserve(t, store, s.ID(), 1, "alice")
}
