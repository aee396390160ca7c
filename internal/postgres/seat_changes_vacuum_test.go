package postgres_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
)

// Migration 0011 gives seat_changes autovacuum thresholds of its own, and
// going down takes them back.
func TestMigrationSetsSeatChangesAutovacuum(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	options := func() []string {
		t.Helper()
		var opts []string
		err := pool.QueryRow(testContext(t),
			`SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = 'seat_changes'::regclass`).Scan(&opts)
		if err != nil {
			t.Fatalf("read seat_changes options: %v", err)
		}
		slices.Sort(opts)
		return opts
	}
	if err := postgres.MigrateTo(pool, 11); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"autovacuum_vacuum_cost_delay=0",
		"autovacuum_vacuum_insert_scale_factor=0",
		"autovacuum_vacuum_insert_threshold=1000",
		"autovacuum_vacuum_scale_factor=0",
		"autovacuum_vacuum_threshold=1000",
	}
	if got := options(); !slices.Equal(got, want) {
		t.Errorf("seat_changes options after 0011 = %v, want %v", got, want)
	}
	if err := postgres.MigrateTo(pool, 10); err != nil {
		t.Fatal(err)
	}
	if got := options(); len(got) != 0 {
		t.Errorf("seat_changes options after going down to 10 = %v, want none", got)
	}
}

// Reclaim vacuums the outbox: the deleted rows' space is free again.
//
// The dead rows are counted in the table itself (pgstattuple), not in
// pg_stat_user_tables: a backend passes on its count of the rows it
// deleted a second or more after the fact, so a VACUUM that removed all 50
// can be followed by n_dead_tup = 50 (a CI run on a busy machine saw it).
// And a VACUUM removes only the rows no snapshot still sees, so Reclaim
// runs once no other session of this database (autovacuum's ANALYZE has
// one) holds a snapshot.
func TestSeatChangesReclaimVacuums(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	outbox := postgres.NewSeatChanges(pool)
	ctx := testContext(t)
	if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pgstattuple`); err != nil {
		t.Fatalf("create extension pgstattuple (the test server's role is a superuser): %v", err)
	}
	s := mustSchedule(t, store, 50)
	for seat := 1; seat <= 50; seat++ {
		mustReserve(t, store, s.ID(), seat, "alice")
	}
	pending, err := outbox.Pending(ctx, 100)
	if err != nil || len(pending) != 50 {
		t.Fatalf("Pending = %d rows, %v", len(pending), err)
	}
	ids := make([]int64, len(pending))
	for i, c := range pending {
		ids[i] = c.Pos
	}
	if err := outbox.Delete(ctx, ids); err != nil {
		t.Fatal(err)
	}
	deadRows := func() int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRow(ctx, `SELECT dead_tuple_count FROM pgstattuple('seat_changes')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := deadRows(); n != 50 {
		t.Fatalf("dead rows before Reclaim = %d, want the 50 deleted", n)
	}
	waitForNoOtherSnapshots(t, pool)
	vacuums := func() int64 {
		t.Helper()
		var n int64
		err := pool.QueryRow(ctx, `SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'seat_changes'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := vacuums()
	if err := outbox.Reclaim(ctx); err != nil {
		t.Fatalf("Reclaim: %v", err)
	}
	if after := vacuums(); after != before+1 {
		t.Errorf("vacuum_count = %d after Reclaim, want %d", after, before+1)
	}
	if n := deadRows(); n != 0 {
		t.Errorf("dead rows after Reclaim = %d, want 0", n)
	}
}

// waitForNoOtherSnapshots returns once no other session of pool's database
// holds a snapshot, so a VACUUM may remove every row deleted before it.
func waitForNoOtherSnapshots(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := testContext(t)
	for {
		var holders int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()
			AND backend_xmin IS NOT NULL`).Scan(&holders)
		if err != nil {
			t.Fatalf("read other sessions' snapshots: %v", err)
		}
		if holders == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d other sessions still hold a snapshot", holders)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestSeatChangesReclaimFailsWithItsContext(t *testing.T) {
	t.Parallel()
	_, pool := newStore(t)
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	err := postgres.NewSeatChanges(pool).Reclaim(ctx)
	if err == nil || !strings.Contains(err.Error(), "vacuum seat changes") {
		t.Fatalf("Reclaim on a cancelled context = %v, want a vacuum seat changes error", err)
	}
}
