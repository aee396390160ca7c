package pglock_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// An acquire whose reply the network drops (the INSERT ran and committed,
// the client never hears it) must not leave the row locked by an orphan
// token for the whole TTL: once the database answers again, the client's
// background release frees it. A retry of the same attempt would have got
// its own lock back (see the contract's AcquireIdempotentPerToken).
func TestAcquireWithLostReplyDoesNotOrphanTheRow(t *testing.T) {
	t.Parallel()
	dbURL := lockenv.DatabaseURL(t)
	direct := openPool(t, dbURL)
	if err := pglock.Migrate(context.Background(), direct); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := lockenv.NewProxy(t, target.Host)
	target.Host = proxy.Addr()
	proxied := openPool(t, target.String())
	locker := lock.New(newBackend(t, proxied), lock.Config{})
	t.Cleanup(locker.Close)
	// One acquisition first: pgx prepares the statement on the connection,
	// so that under the fault the INSERT itself runs and only its reply is
	// lost (a lost reply to the preparation would stop it from running).
	warm, err := locker.Acquire(context.Background(), "warm-up", lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(context.Background()); err != nil {
		t.Fatal(err)
	}

	proxy.AddToxic(lockenv.Toxic{Name: "replies-lost", Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err = locker.Acquire(ctx, "seat", lock.Options{TTL: 20 * time.Second})
	cancel()
	if err == nil {
		t.Fatal("Acquire succeeded without a reply")
	}
	// The row exists: the INSERT ran. (It may already be released: the
	// background release's UPDATE reaches the database even while its
	// reply is lost too.)
	var rows int
	if err := direct.QueryRow(context.Background(), `SELECT count(*) FROM locks WHERE name = 'seat'`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("locks rows for the seat = %d, %v: the INSERT did not reach the database, the test proves nothing", rows, err)
	}
	proxy.RemoveToxic("replies-lost")

	deadline := time.Now().Add(5 * time.Second)
	for rowLockedByAnyone(t, direct, "seat") {
		if time.Now().After(deadline) {
			t.Fatal("row still locked by the lost acquire's token 5s after the database answered again (TTL 20s)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	other := lock.New(newBackend(t, direct), lock.Config{})
	l, err := other.Acquire(context.Background(), "seat", lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatalf("seat still held after the background release: %v", err)
	}
	_ = l.Release(context.Background())
}

func rowLockedByAnyone(t *testing.T, pool *pgxpool.Pool, name string) bool {
	t.Helper()
	var held bool
	err := pool.QueryRow(context.Background(),
		`SELECT EXISTS (SELECT FROM locks WHERE name = $1 AND locked_by IS NOT NULL AND lock_until > clock_timestamp())`,
		name).Scan(&held)
	if err != nil {
		t.Fatal(err)
	}
	return held
}
