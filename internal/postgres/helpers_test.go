package postgres_test

import (
	"context"
	"sync/atomic"
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

// lastFence numbers the fences of the tests that do not care about them:
// every booking gets a fresh, higher one, as from a lock that works.
var lastFence atomic.Int64

func nextFence() int64 { return lastFence.Add(1) }

// insert books a seat with the given fencing token.
func insert(ctx context.Context, store *postgres.Store, scheduleID int64, seatID int, userID string, fence int64) (reservation.Reservation, error) {
	return store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: scheduleID, SeatID: seatID, UserID: userID, Fence: fence})
}

func mustReserve(t *testing.T, store *postgres.Store, scheduleID int64, seatID int, userID string) reservation.Reservation {
	t.Helper()
	return mustReserveFenced(t, store, scheduleID, seatID, userID, nextFence())
}

func mustReserveFenced(t *testing.T, store *postgres.Store, scheduleID int64, seatID int, userID string, fence int64) reservation.Reservation {
	t.Helper()
	r, err := insert(testContext(t), store, scheduleID, seatID, userID, fence)
	if err != nil {
		t.Fatalf("InsertReservation(%d, %d, %q, fence %d): %v", scheduleID, seatID, userID, fence, err)
	}
	return r
}

// seatFence reads a seat's fence directly: the highest of its reservation's
// and of its seat_fences row; ok is false when it has neither.
func seatFence(t *testing.T, pool *pgxpool.Pool, scheduleID int64, seatID int) (fence int64, ok bool) {
	t.Helper()
	var f *int64
	err := pool.QueryRow(testContext(t), `SELECT greatest(
		(SELECT fence FROM reservations WHERE schedule_id = $1 AND seat_id = $2),
		(SELECT fence FROM seat_fences WHERE schedule_id = $1 AND seat_id = $2))`, scheduleID, seatID).Scan(&f)
	if err != nil {
		t.Fatalf("read fence of seat %d: %v", seatID, err)
	}
	if f == nil {
		return 0, false
	}
	return *f, true
}

// countRows counts the rows of table; the name is the test's own constant.
func countRows(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(testContext(t), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
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

// queryCount runs a count(*) query.
func queryCount(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(testContext(t), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}
