// Package lockenv is the test environment of the lock port and its adapters,
// and of the service's tests: each test gets its own slice of real servers,
// named by TEST_REDIS_URL, TEST_REDIS_CLUSTER_URL and TEST_DATABASE_URL (a
// PostgreSQL role allowed to create databases) or, when one is unset,
// started by the test binary itself on first use and stopped when its
// tests end (Run, called from TestMain): `go test ./...` needs only the
// binaries installed. Tests fail, never skip, when a server is missing: a
// green run must mean the adapters were exercised against the real thing.
//
// Besides the shared servers it gives unique names for keys and databases,
// a fresh PostgreSQL database per test (DatabaseURL), a TCP fault proxy in
// the test's own process (Proxy, on Toxiproxy), a redis-server of the test's
// own to restart, kill or pause (StartRedis), and a go-redis hook that holds
// and counts pipelines (Gate).
//
// It imports nothing else from its module, so that the lock folder can be
// copied to another module with its tests.
package lockenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
)

// RedisURL returns the URL of the shared Redis: TEST_REDIS_URL, or the
// binary's own redis-server (see Run). It fails the test when there is none.
func RedisURL(tb testing.TB) string {
	tb.Helper()
	return serverURL(tb, redisEnv)
}

// Redis returns a client of the test Redis, closed when the test ends.
func Redis(tb testing.TB) *redis.Client {
	tb.Helper()
	opts, err := redis.ParseURL(RedisURL(tb))
	if err != nil {
		tb.Fatalf("parse %s: %v", redisEnv, err)
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

// DatabaseURL creates an empty database of its own for the test, on the
// shared PostgreSQL (TEST_DATABASE_URL, or the binary's own: see Run),
// dropped when the test ends, and returns its URL.
func DatabaseURL(tb testing.TB) string {
	tb.Helper()
	admin := serverURL(tb, databaseEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to test PostgreSQL: %v", err)
	}
	defer func() { _ = conn.Close(ctx) }()
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
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("parse %s: %v", databaseEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

// TableExists reports whether the table named name (quoted as SQL would
// need it) exists in pool's database.
func TableExists(tb testing.TB, pool *pgxpool.Pool, name string) bool {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil {
		tb.Fatalf("look up table %s: %v", name, err)
	}
	return exists
}
