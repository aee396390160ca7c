package pglock

import (
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// NewWithHealthInterval is New with the listener's idle ping interval set to
// d, for tests of the ping path.
func NewWithHealthInterval(pool *pgxpool.Pool, d time.Duration) *Backend {
	b := New(pool)
	b.listener.healthInterval = d
	return b
}
