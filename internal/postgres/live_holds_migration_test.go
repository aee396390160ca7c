package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Holds made before the users' rows of live holds existed count against
// the cap from the migration on: the live ones, and only them.
func TestMigrationCountsTheLiveHoldsAlreadyMade(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	pool, err := postgres.Open(ctx, lockenv.DatabaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := postgres.MigrateTo(pool, 13); err != nil {
		t.Fatal(err)
	}
	var scheduleID int64
	if err := pool.QueryRow(ctx, `INSERT INTO schedules (title, starts_at, seat_count) VALUES ('Hamlet', $1, 20) RETURNING id`,
		startsAt).Scan(&scheduleID); err != nil {
		t.Fatal(err)
	}
	for i, end := range []string{
		"expires_at = now() + interval '1 hour'", // live
		"expires_at = now() + interval '1 hour'", // live
		"expires_at = now() - interval '1 second'",
		"expires_at = now() + interval '1 hour', confirmed_at = now()",
		"expires_at = now() + interval '1 hour', released_at = now()",
	} {
		var id string
		if err := pool.QueryRow(ctx, `INSERT INTO holds (schedule_id, user_id, seat_ids, expires_at)
			VALUES ($1, 'fay', ARRAY[$2::integer], now()) RETURNING id::text`, scheduleID, i+1).Scan(&id); err != nil {
			t.Fatalf("hold %d: %v", i, err)
		}
		if _, err := pool.Exec(ctx, `UPDATE holds SET `+end+` WHERE id = $1`, id); err != nil {
			t.Fatalf("hold %d (%s): %v", i, end, err)
		}
	}

	if err := postgres.Migrate(pool); err != nil {
		t.Fatal(err)
	}
	store := postgres.NewStore(pool)
	if _, err := cappedHold(ctx, store, scheduleID, "fay", 3, time.Minute, 10); err != nil {
		t.Fatalf("a third live hold with a cap of 3: %v", err)
	}
	if _, err := cappedHold(ctx, store, scheduleID, "fay", 3, time.Minute, 11); !errors.Is(err, reservation.ErrTooManyHolds) {
		t.Errorf("a fourth live hold with a cap of 3: %v, want ErrTooManyHolds", err)
	}
}
