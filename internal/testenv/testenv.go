// Package testenv gives the service's tests their own slice of the real
// Redis and PostgreSQL servers that `make test` starts (scripts/devenv.sh).
// Tests fail, never skip, when the servers are missing: a green run must
// mean the adapters were exercised.
//
// The environment itself (servers, names, fault proxy, private redis-server,
// pipeline gate) is the lock folder's, lockenv, so that the lock port's
// tests need nothing of the service; testenv forwards it under its old
// names and adds what only the service has: its migrations (Pool) and its
// schedule numbering (SpreadScheduleIDs).
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

// The shared environment, from lockenv.
var (
	RedisURL        = lockenv.RedisURL
	Redis           = lockenv.Redis
	RedisClusterURL = lockenv.RedisClusterURL
	RedisCluster    = lockenv.RedisCluster
	Name            = lockenv.Name
	DatabaseURL     = lockenv.DatabaseURL
	NewProxy        = lockenv.NewProxy
	ProxyGoroutines = lockenv.ProxyGoroutines
	StartRedis      = lockenv.StartRedis
	NewGate         = lockenv.NewGate
)

type (
	// Proxy is lockenv.Proxy: a fault-injecting TCP proxy.
	Proxy = lockenv.Proxy
	// Toxic is lockenv.Toxic: one fault of a Proxy.
	Toxic = lockenv.Toxic
	// RedisProcess is lockenv.RedisProcess: a redis-server of the test's own.
	RedisProcess = lockenv.RedisProcess
	// Gate is lockenv.Gate: a go-redis hook that holds and counts pipelines.
	Gate = lockenv.Gate
)

// Pool opens a pool on a fresh, migrated database of the test's own.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	pool, err := postgres.Open(context.Background(), DatabaseURL(tb))
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
