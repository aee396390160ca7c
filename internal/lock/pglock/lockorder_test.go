package pglock_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// The statements of this file are arranged, with a row lock held by a test
// transaction, so that each waits for the other at the one moment where a
// different row order would close a cycle. PostgreSQL then aborts one of
// them with a deadlock error (40P01) after deadlock_timeout (1s by default).

// A multi-key release and a multi-key acquire of the same keys lock their
// rows in the same order even when the database sorts names linguistically
// (as en_US.UTF-8 does: "a" before "B", where Go's byte order puts "B"
// first).
func TestMultiKeyStatementsLockRowsInKeyOrderUnderALinguisticCollation(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `ALTER TABLE locks ALTER COLUMN name TYPE text COLLATE "und-x-icu"`); err != nil {
		t.Skipf("this PostgreSQL has no ICU collation: %v", err)
	}
	keys := []string{"B", "M", "a"} // Go's order; the collation's is a, B, M
	if !sort.StringsAreSorted(keys) {
		t.Fatal("keys must be in lock.Client's order")
	}
	store := newBackend(t, pool)
	holder, acquirer := backend.NewToken(), backend.NewToken()
	if g, err := store.TryAcquireAll(ctx, keys, holder, time.Minute); err != nil || !g.Acquired {
		t.Fatalf("TryAcquireAll = %+v, %v", g, err)
	}

	// The acquire takes B and waits for M; the release then takes a (the
	// first name in the collation's order) and waits for B. Once M is let
	// go, the acquire wants a: a cycle, unless the release locks in key
	// order too, in which case it waits for B before taking anything.
	blocker := dedicatedConn(t, pool)
	tx := holdRowLock(t, blocker, "M")
	acquired := make(chan error, 1)
	go func() {
		_, err := store.TryAcquireAll(ctx, keys, acquirer, time.Minute)
		acquired <- err
	}()
	monitor := dedicatedConn(t, pool)
	waitForLockWaits(t, monitor, 1, nil)
	type releaseResult struct {
		n   int
		err error
	}
	released := make(chan releaseResult, 1)
	go func() {
		n, err := store.ReleaseAll(ctx, keys, holder)
		released <- releaseResult{n, err}
	}()
	waitForLockWaits(t, monitor, 2, nil)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	if err := <-acquired; err != nil {
		t.Errorf("TryAcquireAll racing a release: %v", err)
	}
	if r := <-released; r.err != nil || r.n != len(keys) {
		t.Errorf("ReleaseAll racing an acquire = %d, %v; want %d, <nil>", r.n, r.err, len(keys))
	}
	if _, held, err := store.HoldsAll(ctx, keys[:1], holder); err != nil || held {
		t.Errorf("holder still holds %s after ReleaseAll: %v", keys[0], err)
	}
}

// Prune never waits for a row that an acquire is changing: a DELETE that
// waited there, holding rows it had already deleted, would deadlock with a
// TryAcquireAll taking the same names in key order.
func TestPruneNeverDeadlocksWithAMultiKeyAcquire(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := context.Background()
	// Three long-free rows, stored in the order z, a, m: the order in
	// which a sequential scan meets them, unlike the keys' a, m, z.
	if _, err := pool.Exec(ctx, `INSERT INTO locks (name, lock_until, locked_at, locked_by, fence) VALUES
		('z', '-infinity', clock_timestamp() - interval '2 days', NULL, 1),
		('a', '-infinity', clock_timestamp() - interval '2 days', NULL, 1),
		('m', '-infinity', clock_timestamp() - interval '2 days', NULL, 1)`); err != nil {
		t.Fatal(err)
	}
	store := newBackend(t, pool)
	keys := []string{"a", "m", "z"}

	// The acquire takes a and waits for m. A DELETE in physical order
	// would delete z and wait for a; once m is let go the acquire wants
	// z, which that DELETE holds: a cycle.
	blocker := dedicatedConn(t, pool)
	tx := holdRowLock(t, blocker, "m")
	type acquireResult struct {
		grant backend.MultiGrant
		err   error
	}
	acquired := make(chan acquireResult, 1)
	go func() {
		g, err := store.TryAcquireAll(ctx, keys, backend.NewToken(), time.Minute)
		acquired <- acquireResult{g, err}
	}()
	monitor := dedicatedConn(t, pool)
	waitForLockWaits(t, monitor, 1, nil)
	type pruneResult struct {
		n   int64
		err error
	}
	pruned := make(chan pruneResult, 1)
	go func() {
		n, err := store.Prune(ctx, 24*time.Hour)
		pruned <- pruneResult{n, err}
	}()
	// Prune either returns at once (it skipped the rows being changed)
	// or waits for one of them; then the acquire is let go.
	waitForLockWaits(t, monitor, 2, func() bool { return len(pruned) > 0 })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	a := <-acquired
	if a.err != nil || !a.grant.Acquired {
		t.Errorf("TryAcquireAll racing Prune = %+v, %v; want acquired", a.grant, a.err)
	}
	prune := <-pruned
	if prune.err != nil {
		t.Errorf("Prune racing TryAcquireAll: %v", prune.err)
	}
	if prune.n > 1 {
		t.Errorf("Prune deleted %d rows; only z was free and not being acquired", prune.n)
	}
	if held, err := heldCount(ctx, pool, keys); err != nil || held != len(keys) {
		t.Errorf("keys held after the race = %d, %v; want %d", held, err, len(keys))
	}
}

// dedicatedConn opens a connection outside pool, so that the pool's
// connections stay free for the statements under test.
func dedicatedConn(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	conn, err := pgx.ConnectConfig(context.Background(), pool.Config().ConnConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// holdRowLock begins a transaction on conn that holds name's row lock
// until it ends.
func holdRowLock(t *testing.T, conn *pgx.Conn, name string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	var got string
	if err := tx.QueryRow(ctx, `SELECT name FROM locks WHERE name = $1 FOR UPDATE`, name).Scan(&got); err != nil {
		t.Fatalf("lock row %s: %v", name, err)
	}
	return tx
}

// waitForLockWaits waits until n sessions of the test's database wait for a
// lock or, when done is not nil, until done reports true. It fails the test
// after 20 seconds.
func waitForLockWaits(t *testing.T, monitor *pgx.Conn, n int, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		err := monitor.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		switch {
		case err != nil:
			t.Fatal(err)
		case waiting >= n, done != nil && done():
			return
		case time.Now().After(deadline):
			t.Fatalf("%d sessions waiting for a lock after 20s, want %d", waiting, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// heldCount is how many of keys are held now, by anyone.
func heldCount(ctx context.Context, pool *pgxpool.Pool, keys []string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM locks
		WHERE name = ANY($1) AND locked_by IS NOT NULL AND lock_until > clock_timestamp()`, keys).Scan(&n)
	return n, err
}
