package postgres

import (
	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgxpool"
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
const BookSeats = bookSeats
