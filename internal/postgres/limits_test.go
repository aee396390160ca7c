package postgres_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// The schema's CHECK constraints repeat the domain's limits in SQL; this
// test keeps the two in step, so that a limit changed in Go fails here
// until a migration changes it in PostgreSQL too.
func TestSchemaLimitsMatchTheDomain(t *testing.T) {
	t.Parallel()
	_, pool := newStore(t)
	for _, c := range []struct {
		table, column string
		want          string
	}{
		{"schedules", "seat_count", fmt.Sprintf("(seat_count >= 1) AND (seat_count <= %d)", reservation.MaxSeatCount)},
		{"schedules", "title", fmt.Sprintf("(char_length(title) >= 1) AND (char_length(title) <= %d)", reservation.MaxTitleRunes)},
		{"holds", "seat_ids", fmt.Sprintf("(cardinality(seat_ids) >= 1) AND (cardinality(seat_ids) <= %d)", reservation.MaxHoldSeats)},
	} {
		var def string
		err := pool.QueryRow(testContext(t), `
			SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
			WHERE c.conrelid = $1::regclass AND a.attname = $2 AND c.contype = 'c'`, c.table, c.column).Scan(&def)
		if err != nil {
			t.Errorf("CHECK on %s.%s: %v", c.table, c.column, err)
			continue
		}
		if !strings.Contains(def, c.want) {
			t.Errorf("CHECK on %s.%s is %s, want it to contain %s", c.table, c.column, def, c.want)
		}
	}
}
