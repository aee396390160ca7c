package postgres

import (
	"context"

	"github.com/golang-migrate/migrate/v4"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/idempotency"
)

// MigrateTo migrates pool's schema up (or down) to version: tests put rows
// into an older schema and check what a newer migration makes of them.
func MigrateTo(pool *pgxpool.Pool, version uint) error {
	return migrateWith(pool, func(m *migrate.Migrate) error { return m.Migrate(version) })
}

// PendingBookings is how many bookings wait for a group write: tests use
// it to know that the bookings they sent are queued behind a write they
// hold back.
func PendingBookings(s *Store) int {
	return s.group.Pending()
}

// BookSeats is the group write's statement, for the tests of its plan.
var BookSeats = bookSeats

// SettleClaim is IdempotencyStore.settleClaim, for the tests of a claim
// whose statement failed with its outcome unknown.
func (s *IdempotencyStore) SettleClaim(ctx context.Context, k idempotency.Key, id uuid.UUID, claimErr error) (idempotency.Claim, bool) {
	return s.settleClaim(ctx, k, id, claimErr)
}
