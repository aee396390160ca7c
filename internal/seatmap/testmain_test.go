package seatmap_test

import (
	"testing"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// The tests' Redis and PostgreSQL: those TEST_* names, or servers of this
// test binary's own, started on first use and stopped at the end.
func TestMain(m *testing.M) { lockenv.Run(m) }
