package postgres

// PendingBookings is how many bookings wait for a group write: tests use
// it to know that the bookings they sent are queued behind a write they
// hold back.
func PendingBookings(s *Store) int {
	return s.group.Pending()
}
