package postgres_test

import (
	"errors"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// PostgreSQL refuses NUL in text (SQLSTATE 22021). That is the client's
// invalid field, not a fault of the service: a 422, never a 500.
func TestTextPostgreSQLRefusesIsAnInvalidField(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)

	s, err := reservation.NewSchedule("Ham\x00let", startsAt, 10)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.CreateSchedule(ctx, s)
	var invalid *reservation.InvalidError
	if !errors.As(err, &invalid) || invalid.Field != "title" {
		t.Errorf("CreateSchedule with NUL in the title: %v, want an InvalidError on title", err)
	}

	stored := mustSchedule(t, store, 10)
	_, err = insert(ctx, store, stored.ID(), 1, "al\x00ice", nextFence())
	if !errors.As(err, &invalid) || invalid.Field != "userId" {
		t.Errorf("InsertReservation with NUL in the user id: %v, want an InvalidError on userId", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM reservations`).Scan(&n); err != nil || n != 0 {
		t.Errorf("reservations stored = %d (%v), want 0", n, err)
	}
}
