package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Schedules stored before starts were checked may start outside the years
// 1..9999, which no client can read: the migration that adds the check
// moves each to the nearest instant inside, leaves the others alone, and
// from then on the schema refuses such a start.
func TestMigrationRepairsUnreadableStarts(t *testing.T) {
	t.Parallel()
	pool, err := postgres.Open(testContext(t), lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.MigrateTo(pool, 8); err != nil {
		t.Fatal(err)
	}
	starts := map[string]time.Time{
		"10000-01-01 23:58:59+00":       reservation.LatestStart,
		"0002-12-31 23:59:00+00 BC":     reservation.EarliestStart,
		"2026-12-24 10:30:00+00":        time.Date(2026, 12, 24, 10, 30, 0, 0, time.UTC),
		"9999-12-31 23:59:59.999999+00": reservation.LatestStart,
		"0001-01-01 00:00:00+00":        reservation.EarliestStart,
	}
	ids := map[string]int64{}
	for stored := range starts {
		var id int64
		err := pool.QueryRow(testContext(t),
			`INSERT INTO schedules (title, starts_at, seat_count) VALUES ('Hamlet', $1::timestamptz, 5) RETURNING id`, stored).Scan(&id)
		if err != nil {
			t.Fatalf("store a start of %s: %v", stored, err)
		}
		ids[stored] = id
	}

	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	for stored, want := range starts {
		s, err := store.Schedule(testContext(t), ids[stored])
		if err != nil {
			t.Fatalf("read the schedule stored with %s: %v", stored, err)
		}
		if !s.StartsAt().Equal(want) {
			t.Errorf("start stored as %s reads %s after the migration, want %s", stored, s.StartsAt().UTC(), want)
		}
	}
	if list, err := store.ListSchedules(testContext(t), 0, 100); err != nil || len(list) != len(starts) {
		t.Fatalf("list after the migration: %d schedules, %v", len(list), err)
	}

	_, err = pool.Exec(testContext(t), `INSERT INTO schedules (title, starts_at, seat_count) VALUES ('Hamlet', '10000-01-01 00:00:00+00', 5)`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.ConstraintName != "schedules_starts_at_check" {
		t.Fatalf("a start in year 10000 after the migration: %v, want the schedules_starts_at_check violation", err)
	}
}
