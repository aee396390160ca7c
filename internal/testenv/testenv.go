// Package testenv is what the service's tests need beyond the lock folder's
// test environment, lockenv: its migrations (Pool), its schedule numbering
// (SpreadScheduleIDs), a Redis primary with a replica and three Sentinels
// (StartSentinel), and a PostgreSQL primary with its synchronous standby
// under Patroni (StartPatroni).
//
// The environment itself (the shared servers, started by the test binary
// when TEST_* does not name them, names, fault proxy, private redis-server,
// pipeline gate) has one home, lockenv, which the service's tests use
// directly: it imports nothing of the service, so that the lock port's
// tests pass when the folder is copied out. A package whose tests use the
// shared servers calls lockenv.Run from its TestMain.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
)

// Pool opens a pool on a fresh, migrated database of the test's own.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := postgres.Open(context.Background(), lockenv.DatabaseURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		tb.Fatal(err)
	}
	return pool
}

// SpreadScheduleIDs makes a fresh database number its schedules from a random
// offset. Every test has its own database but all share one Redis, and seat
// lock keys are named by schedule id: without this, parallel tests would
// contend for "lock:{schedule:1}:seat:1", and a seat booked by an earlier
// test, whose key stays sealed for a day, would refuse a later test's.
func SpreadScheduleIDs(tb testing.TB, pool *pgxpool.Pool) {
	tb.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	start := int64(binary.BigEndian.Uint32(b[:])) + 1
	// DDL takes no parameters; start is an integer we made.
	if _, err := pool.Exec(context.Background(),
		fmt.Sprintf("ALTER TABLE schedules ALTER COLUMN id RESTART WITH %d", start)); err != nil {
		tb.Fatalf("spread schedule ids: %v", err)
	}
}
