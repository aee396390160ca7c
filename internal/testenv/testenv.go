// Package testenv gives tests their own slice of the real Redis and
// PostgreSQL servers that `make test` starts (scripts/devenv.sh). Tests fail,
// never skip, when the servers are missing: a green run must mean the
// adapters were exercised.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/postgres"
)

// RedisURL returns TEST_REDIS_URL or fails the test.
func RedisURL(tb testing.TB) string { return mustEnv(tb, "TEST_REDIS_URL") }

// Redis returns a client of the test Redis, closed when the test ends.
func Redis(tb testing.TB) *redis.Client {
	tb.Helper()
	opts, err := redis.ParseURL(RedisURL(tb))
	if err != nil {
		tb.Fatalf("parse TEST_REDIS_URL: %v", err)
	}
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	tb.Cleanup(func() { _ = client.Close() })
	return client
}

// Name returns a name unique to this test run, for keys and databases.
func Name(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// DatabaseURL creates an empty database of its own for the test, dropped when
// the test ends, and returns its URL.
func DatabaseURL(tb testing.TB) string {
	tb.Helper()
	admin := mustEnv(tb, "TEST_DATABASE_URL")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	name := Name("test_")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

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

func mustEnv(tb testing.TB, name string) string {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		tb.Fatalf("%s is not set: run the tests with `make test`, which starts real Redis and PostgreSQL", name)
	}
	return v
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
