package pglock_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// Instances starting together all migrate; none fails, and a table that
// exists, rows and all, is left as it is.
func TestMigrateConcurrentlyThenNoOp(t *testing.T) {
	t.Parallel()
	url := lockenv.DatabaseURL(t)
	const instances = 5
	pools := make([]*pgxpool.Pool, instances)
	for i := range pools {
		pools[i] = openPool(t, url)
	}
	start := make(chan struct{})
	errs := make([]error, instances)
	var wg sync.WaitGroup
	for i, pool := range pools {
		wg.Go(func() {
			<-start
			errs[i] = pglock.Migrate(testContext(t), pool)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: Migrate: %v", i, err)
		}
	}

	b := newBackend(t, pools[0])
	g, err := b.TryAcquire(testContext(t), "kept", backend.NewToken(), time.Minute)
	if err != nil || !g.Acquired {
		t.Fatalf("TryAcquire = %+v, %v", g, err)
	}
	if err := pglock.Migrate(testContext(t), pools[1]); err != nil {
		t.Fatalf("Migrate on an existing table: %v", err)
	}
	if r, ok := readRow(t, pools[1], "kept"); !ok || !r.held || r.fence != g.Fence {
		t.Errorf("row after a second Migrate = %+v (found %v), want the held lock with fence %d", r, ok, g.Fence)
	}
}

// A Backend keeps its locks in its own table and announces releases on its
// own channel: names that need quoting work, the default table is never
// touched, and Backends on another channel are not woken.
func TestTableAndChannelOptions(t *testing.T) {
	t.Parallel()
	const table, channel = "Lock Rows", "Lock Released"
	pool := newPool(t, pglock.WithTable(table))
	if lockenv.TableExists(t, pool, pglock.DefaultTable) {
		t.Fatalf("Migrate WithTable(%q) created %q too", table, pglock.DefaultTable)
	}
	ctx := testContext(t)
	b := newBackend(t, pool, pglock.WithTable(table), pglock.WithChannel(channel))
	deaf := newBackend(t, pool, pglock.WithTable(table)) // the default channel

	locker := lock.New(b, lock.Config{})
	t.Cleanup(locker.Close)
	l, err := locker.Acquire(ctx, "seat", lock.Options{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var fence int64
	if err := pool.QueryRow(ctx, `SELECT fence FROM "Lock Rows" WHERE name = 'seat'`).Scan(&fence); err != nil || fence != l.Fence() {
		t.Fatalf("fence in %q = %d, %v; want the lease's %d", table, fence, err, l.Fence())
	}
	if g, err := deaf.TryAcquire(ctx, "seat", backend.NewToken(), time.Second); err != nil || g.Acquired {
		t.Fatalf("TryAcquire by another Backend on the table = %+v, %v; want held", g, err)
	}

	heard, err := b.Subscribe(ctx, "seat")
	if err != nil {
		t.Fatal(err)
	}
	defer heard.Close()
	unheard, err := deaf.Subscribe(ctx, "seat")
	if err != nil {
		t.Fatal(err)
	}
	defer unheard.Close()
	var listening int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN "Lock Released"'`).Scan(&listening); err != nil || listening != 1 {
		t.Fatalf("connections listening on %q = %d, %v; want 1", channel, listening, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("release not delivered on the Backend's channel")
	}
	select {
	case <-unheard.Released():
		t.Error("a Backend listening on another channel was woken")
	case <-time.After(200 * time.Millisecond):
	}

	if _, err := pool.Exec(ctx, `UPDATE "Lock Rows" SET locked_at = locked_at - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Prune(ctx, time.Minute); err != nil || n != 1 {
		t.Errorf("Prune = %d, %v; want the released row of %q", n, err, table)
	}
}

// Invalid names are refused before any SQL is built: New and Schema panic,
// Migrate returns an error.
func TestInvalidNames(t *testing.T) {
	t.Parallel()
	pool := openPool(t, "postgres://x:y@127.0.0.1:1/db?connect_timeout=1")
	for _, name := range []string{"", strings.Repeat("x", 64), "lo\x00cks"} {
		for _, opt := range []pglock.Option{pglock.WithTable(name), pglock.WithChannel(name)} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("New with the name %q did not panic", name)
					}
				}()
				_ = pglock.New(pool, opt).Close()
			}()
		}
		if err := pglock.Migrate(testContext(t), pool, pglock.WithTable(name)); err == nil || !strings.Contains(err.Error(), "table name") {
			t.Errorf("Migrate WithTable(%q) = %v, want an invalid table name", name, err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Schema(%q) did not panic", name)
				}
			}()
			_ = pglock.Schema(name)
		}()
	}
	// The longest name PostgreSQL keeps whole is fine.
	_ = pglock.New(pool, pglock.WithTable(strings.Repeat("x", 63)), pglock.WithChannel(strings.Repeat("y", 63))).Close()
}
