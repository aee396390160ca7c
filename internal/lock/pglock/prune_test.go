package pglock_test

import (
	"context"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// Prune deletes only rows that have been free long enough (released, or
// whose lease ended, that long ago); the fence of a pruned name keeps
// growing.
func TestPruneDeletesOnlyLongFreeRows(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	backend := pglock.New(pool)
	t.Cleanup(func() { _ = backend.Close() })
	locker := lock.New(backend, lock.Config{})
	ctx := context.Background()

	released, err := locker.Acquire(ctx, "released", lock.Options{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = locker.Acquire(ctx, "expired", lock.Options{TTL: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	held, err := locker.Acquire(ctx, "held", lock.Options{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release(ctx) }()
	// Age every row by an hour, as if acquired long ago, and the expired
	// lease's end with it.
	if _, err := pool.Exec(ctx, `UPDATE locks SET locked_at = locked_at - interval '1 hour',
		lock_until = CASE WHEN name = 'expired' THEN lock_until - interval '1 hour' ELSE lock_until END`); err != nil {
		t.Fatal(err)
	}
	// Free for too short a time: released just now, and a lease acquired
	// long ago (kept by a watchdog) that ended a minute ago.
	if _, err := pool.Exec(ctx, `INSERT INTO locks (name, lock_until, locked_at, locked_by, fence) VALUES
		('recent', '-infinity', clock_timestamp(), NULL, 1),
		('recently-expired', clock_timestamp() - interval '1 minute', clock_timestamp() - interval '2 hours', 'gone', 1)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // "expired" has run out

	n, err := backend.Prune(ctx, 30*time.Minute)
	if err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2 (released and expired)", n, err)
	}
	var names []string
	rows, _ := pool.Query(ctx, `SELECT name FROM locks ORDER BY name`)
	for rows.Next() {
		var name string
		_ = rows.Scan(&name)
		names = append(names, name)
	}
	if rows.Err() != nil || len(names) != 3 || names[0] != "held" || names[1] != "recent" || names[2] != "recently-expired" {
		t.Fatalf("rows left = %v (%v), want [held recent recently-expired]", names, rows.Err())
	}
	if _, err := locker.Acquire(ctx, "held", lock.Options{TTL: time.Second}); err == nil {
		t.Fatal("a held lock was pruned")
	}
	again, err := locker.Acquire(ctx, "released", lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Release(ctx) }()
	if again.Fence() <= released.Fence() {
		t.Errorf("fence after prune = %d, not above %d", again.Fence(), released.Fence())
	}
}
