// Package instances starts the service for tests outside internal/app:
// on lockenv's servers, a database of the test's own. It is apart from
// testenv because it imports internal/app, whose own tests use testenv.
package instances

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
)

// Secret is the AUTH_SECRET of Config's instances: tests
// mint their tokens with it.
const Secret = "testenv-instance-secret-testenv-instance!"

// Config is the configuration of an instance of the service for a
// test: the test binary's Redis (lockenv's), a fresh PostgreSQL database
// of the test's own, and the service's defaults with the Redis lock.
func Config(tb testing.TB) config.Config {
	tb.Helper()
	return config.Config{
		DatabaseURL: lockenv.DatabaseURL(tb),
		RedisURL:    lockenv.RedisURL(tb),
		AuthSecret:  Secret,
		LockTTL:     5 * time.Second,
		LockMaxWait: 10 * time.Second,
		LockBackend: config.BackendRedis,
		FastPath:    true,
		HoldTTL:     10 * time.Minute,
		BatchLanes:  2,
	}
}

// Serve starts n instances of cfg on 127.0.0.1, on its database
// migrated with schedule ids of its own (the Redis is shared with other
// tests: the seat locks stay apart), each running the periodic jobs for
// that database alone, as separate deployments sharing one Redis would;
// it returns their base URLs, and the test's end shuts them down.
func Serve(tb testing.TB, cfg config.Config, n int) []string {
	tb.Helper()
	pool, err := postgres.Open(context.Background(), cfg.DatabaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	if err := postgres.Migrate(pool); err != nil {
		tb.Fatal(err)
	}
	testenv.SpreadScheduleIDs(tb, pool)
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		tb.Fatal(err)
	}
	var urls []string
	for range n {
		a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler), app.WithJobNamespace(strings.TrimPrefix(u.Path, "/")+"/"))
		if err != nil {
			tb.Fatalf("app.New: %v", err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Serve(ctx, ln) }()
		tb.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("Serve: %v", err)
			}
			a.Close()
		})
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls
}
