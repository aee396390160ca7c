package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
)

// Migrating down past the rows of several seats gives each seat its own
// row again, in the order the seats had, so that an older relay reads
// every change.
func TestSeatChangesOfManySeatsMigrateDownToOneRowEach(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	pool, err := postgres.Open(ctx, lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 1, "alice")
	mustHold(t, store, s.ID(), "bob", time.Minute, 6, 4)
	want := seatChanges(t, pool, s.ID())

	if err := postgres.MigrateTo(pool, 15); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT seat_id || ':' || status FROM seat_changes WHERE schedule_id = $1 ORDER BY id`, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("after migrating down, a row a seat: %v, want %v", got, want)
	}
}
