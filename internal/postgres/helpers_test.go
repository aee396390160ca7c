package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/testenv"
)

// newStore returns a Store on a fresh migrated database of the test's own,
// and the pool under it for direct checks.
func newStore(t *testing.T) (*postgres.Store, *pgxpool.Pool) {
	t.Helper()
	pool := testenv.Pool(t)
	return postgres.NewStore(pool), pool
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var startsAt = time.Date(2030, 5, 17, 19, 30, 0, 0, time.UTC)

func mustSchedule(t *testing.T, store *postgres.Store, seatCount int) reservation.Schedule {
	t.Helper()
	s, err := reservation.NewSchedule("Hamlet", startsAt, seatCount)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := store.CreateSchedule(testContext(t), s)
	if err != nil {
		t.Fatalf("CreateSchedule: %v", err)
	}
	return stored
}

func mustReserve(t *testing.T, store *postgres.Store, scheduleID int64, seatID int, userID string) reservation.Reservation {
	t.Helper()
	r, err := store.InsertReservation(testContext(t), scheduleID, seatID, userID)
	if err != nil {
		t.Fatalf("InsertReservation(%d, %d, %q): %v", scheduleID, seatID, userID, err)
	}
	return r
}

// countReservations counts rows directly, bypassing the Store.
func countReservations(t *testing.T, pool *pgxpool.Pool, scheduleID int64) int {
	t.Helper()
	var n int
	err := pool.QueryRow(testContext(t), `SELECT count(*) FROM reservations WHERE schedule_id = $1`, scheduleID).Scan(&n)
	if err != nil {
		t.Fatalf("count reservations: %v", err)
	}
	return n
}
