package pglock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/locktest"
	"github.com/seatlock/seatlock/internal/lock/pglock"
)

// Watchdogs, waiters, the listener goroutine and its connection must all
// stop. Every pool is closed by its test's cleanup, so pgxpool's own
// goroutines need no exception.
// The servers of lockenv are stopped before goleak looks.
func TestMain(m *testing.M) { goleak.VerifyTestMain(lockenv.Wrap(m), lockenv.ProxyGoroutines()...) }

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newBackend returns a Backend on pool, closed when the test ends (before
// the pool, which was registered first).
func newBackend(t *testing.T, pool *pgxpool.Pool, opts ...pglock.Option) *pglock.Backend {
	t.Helper()
	b := pglock.New(pool, opts...)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// unlock ends key's lease whoever holds it, as an operator would by hand.
func unlock(t *testing.T, pool *pgxpool.Pool, key string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(),
		`UPDATE locks SET lock_until = '-infinity', locked_by = NULL WHERE name = $1`, key); err != nil {
		t.Errorf("unlock %s: %v", key, err)
	}
}

// deleteRow forgets key's lock and fence, as a restored backup or an
// operator's DELETE would.
func deleteRow(t *testing.T, pool *pgxpool.Pool, key string) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `DELETE FROM locks WHERE name = $1`, key); err != nil {
		t.Errorf("delete %s: %v", key, err)
	}
}

func TestContract(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Harness {
		pool := newPool(t)
		return locktest.Harness{
			Backend: newBackend(t, pool),
			Delete:  func(key string) { unlock(t, pool, key) },
			Wipe:    func(key string) { deleteRow(t, pool, key) },
		}
	})
}

func TestWakeUpLatency(t *testing.T) {
	t.Parallel()
	locktest.WakeUpLatency(t, newBackend(t, newPool(t)), 100)
}

// lockRow is a row of the locks table, with its times relative to the
// database clock.
type lockRow struct {
	held       bool
	hasOwner   bool
	ownerLen   int
	untilIn    time.Duration // lock_until - clock_timestamp(), finite rows only
	lockedAgo  time.Duration // clock_timestamp() - locked_at
	fence      int64
	releasedAt bool // lock_until = '-infinity'
}

func readRow(t *testing.T, pool *pgxpool.Pool, key string) (lockRow, bool) {
	t.Helper()
	var r lockRow
	var untilMicros, agoMicros int64
	err := pool.QueryRow(testContext(t), `
		SELECT lock_until > clock_timestamp(),
		       locked_by IS NOT NULL,
		       coalesce(length(locked_by), 0),
		       CASE WHEN isfinite(lock_until)
		            THEN (extract(epoch FROM lock_until - clock_timestamp()) * 1000000)::bigint ELSE 0 END,
		       (extract(epoch FROM clock_timestamp() - locked_at) * 1000000)::bigint,
		       fence,
		       lock_until = '-infinity'
		FROM locks WHERE name = $1`, key).
		Scan(&r.held, &r.hasOwner, &r.ownerLen, &untilMicros, &agoMicros, &r.fence, &r.releasedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return lockRow{}, false
	}
	if err != nil {
		t.Fatalf("read row %s: %v", key, err)
	}
	r.untilIn = time.Duration(untilMicros) * time.Microsecond
	r.lockedAgo = time.Duration(agoMicros) * time.Microsecond
	return r, true
}

// dbMicros is the database clock in microseconds since the epoch.
func dbMicros(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(testContext(t),
		`SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRowAfterAcquire(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	locker := lock.New(newBackend(t, pool), lock.Config{})
	key := "lock:{schedule:" + lockenv.Name("") + "}:seat:7"

	before := dbMicros(t, pool)
	l, err := locker.Acquire(testContext(t), key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	after := dbMicros(t, pool)

	r, ok := readRow(t, pool, key)
	if !ok {
		t.Fatalf("no row named %q after Acquire", key)
	}
	if !r.held || !r.hasOwner || r.ownerLen != 32 {
		t.Errorf("row: held=%v, locked_by set=%v (length %d); want held by a 32-hex-digit owner token", r.held, r.hasOwner, r.ownerLen)
	}
	if r.untilIn <= 4*time.Second || r.untilIn > 5*time.Second {
		t.Errorf("lock_until - clock_timestamp() = %v, want in (4s, 5s]", r.untilIn)
	}
	if r.lockedAgo < 0 || r.lockedAgo > time.Second {
		t.Errorf("locked_at is %v before the database clock, want within a second", r.lockedAgo)
	}
	if r.fence != l.Fence() {
		t.Errorf("row fence = %d, want the lease's fence %d", r.fence, l.Fence())
	}
	// A new row's fence is the database clock in microseconds.
	if l.Fence() < before || l.Fence() > after {
		t.Errorf("first fence %d is not the database clock in µs (between %d and %d)", l.Fence(), before, after)
	}
}

func TestReleaseKeepsTheFenceRow(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	locker := lock.New(newBackend(t, pool), lock.Config{})
	key := lockenv.Name("lock:release:")
	ctx := testContext(t)

	first, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r, ok := readRow(t, pool, key)
	if !ok {
		t.Fatal("Release deleted the row, and with it the fence")
	}
	if r.held || r.hasOwner || !r.releasedAt || r.fence != first.Fence() {
		t.Errorf("row after Release: held=%v, locked_by set=%v, lock_until=-infinity %v, fence %d; want unheld, no owner, -infinity, fence %d",
			r.held, r.hasOwner, r.releasedAt, r.fence, first.Fence())
	}

	second, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	defer func() { _ = second.Release(context.Background()) }()
	if second.Fence() <= first.Fence() {
		t.Errorf("fence after Release = %d, not above %d", second.Fence(), first.Fence())
	}
}

// Fences keep growing when the row is lost: a new row restarts from the
// database clock, far above the previous counter.
func TestFenceAfterRowDeletedRestartsFromDatabaseClock(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	locker := lock.New(newBackend(t, pool), lock.Config{})
	key := lockenv.Name("lock:wipe:")
	ctx := testContext(t)

	var last int64
	for i := range 5 {
		l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence() <= last {
			t.Fatalf("acquisition %d: fence %d not above %d", i, l.Fence(), last)
		}
		last = l.Fence()
		_ = l.Release(ctx)
	}
	deleteRow(t, pool, key)
	before := dbMicros(t, pool)
	l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	if l.Fence() <= last || l.Fence() < before {
		t.Errorf("fence after DELETE = %d, want above %d and at least the database clock %d µs", l.Fence(), last, before)
	}
}

func TestRowWithoutEndReportsUnknownRemaining(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	locker := lock.New(newBackend(t, pool), lock.Config{})
	key := lockenv.Name("lock:forever:")
	if _, err := pool.Exec(testContext(t), `
		INSERT INTO locks (name, lock_until, locked_at, locked_by, fence)
		VALUES ($1, 'infinity', now(), 'set-by-an-operator', 1)`, key); err != nil {
		t.Fatal(err)
	}
	_, err := locker.Acquire(testContext(t), key, lock.Options{TTL: time.Second})
	var held *lock.HeldError
	if !errors.As(err, &held) || held.Remaining != 0 {
		t.Fatalf("got %v, want *HeldError with Remaining 0", err)
	}
}

func TestExpiredRowIsTakenOverWithAHigherFence(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := newBackend(t, pool)
	key := lockenv.Name("lock:expired:")
	ctx := testContext(t)
	// A holder that died: its row is left with a lease in the past and a
	// fence from the future.
	const future = int64(1) << 60
	if _, err := pool.Exec(ctx, `
		INSERT INTO locks (name, lock_until, locked_at, locked_by, fence)
		VALUES ($1, clock_timestamp() - interval '1 second', clock_timestamp() - interval '2 seconds', 'dead-holder', $2)`,
		key, future); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Release(ctx, key, "dead-holder"); ok || err != nil {
		t.Errorf("Release of an expired lease = %v, %v; want false", ok, err)
	}
	if ok, err := b.Extend(ctx, key, "dead-holder", time.Second); ok || err != nil {
		t.Errorf("Extend of an expired lease = %v, %v; want false", ok, err)
	}
	g, err := b.TryAcquire(ctx, key, backend.NewToken(), time.Second)
	if err != nil || !g.Acquired || g.Fence != future+1 {
		t.Fatalf("TryAcquire over an expired row = %+v, %v; want acquired with fence %d", g, err, future+1)
	}
}

// A release committed right after Subscribe returned is delivered, also on
// the first Subscribe of a Backend, which opens the listening connection.
func TestReleaseRightAfterSubscribeWakes(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := testContext(t)
	for i := range 10 {
		b := pglock.New(pool)
		key := lockenv.Name("lock:sub:")
		token := backend.NewToken()
		if g, err := b.TryAcquire(ctx, key, token, 10*time.Second); err != nil || !g.Acquired {
			t.Fatalf("TryAcquire = %+v, %v", g, err)
		}
		sub, err := b.Subscribe(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := b.Release(ctx, key, token); !ok || err != nil {
			t.Fatalf("Release = %v, %v", ok, err)
		}
		select {
		case <-sub.Released():
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: release right after Subscribe was not delivered", i)
		}
		sub.Close()
		_ = b.Close()
	}
}

// Subscriptions hear only their own key's releases, and a failed Release
// wakes no one.
func TestReleaseWakesOnlyItsKey(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := newBackend(t, pool)
	ctx := testContext(t)
	keyA, keyB := lockenv.Name("lock:a:"), lockenv.Name("lock:b:")
	subA, err := b.Subscribe(ctx, keyA)
	if err != nil {
		t.Fatal(err)
	}
	defer subA.Close()
	subB, err := b.Subscribe(ctx, keyB)
	if err != nil {
		t.Fatal(err)
	}
	defer subB.Close()

	token := backend.NewToken()
	if g, err := b.TryAcquire(ctx, keyA, token, 10*time.Second); err != nil || !g.Acquired {
		t.Fatalf("TryAcquire = %+v, %v", g, err)
	}
	if ok, _ := b.Release(ctx, keyA, "not-the-owner"); ok {
		t.Fatal("Release by a stranger succeeded")
	}
	if ok, err := b.Release(ctx, keyA, token); !ok || err != nil {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	select {
	case <-subA.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("subscription of the released key not woken")
	}
	select {
	case <-subB.Released():
		t.Error("subscription of another key woken")
	case <-subA.Released():
		t.Error("a failed Release woke the key's subscription")
	case <-time.After(200 * time.Millisecond):
	}
}

// listenerPID finds the backend of the listening connection in the test's
// own database: the one other than the asking session whose last statement
// was its LISTEN, or the ping it sends when idle for the health interval
// (pgx's "-- ping"), which replaces the LISTEN in pg_stat_activity.
func listenerPID(t *testing.T, pool *pgxpool.Pool) uint32 {
	t.Helper()
	rows, err := pool.Query(testContext(t), `
		SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query IN ($1, '-- ping')`,
		`LISTEN "`+pglock.DefaultChannel+`"`)
	if err != nil {
		t.Fatalf("find the listening connection: %v", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[uint32])
	if err != nil || len(pids) != 1 {
		t.Fatalf("find the listening connection: backends %v (%v), want one", pids, err)
	}
	return pids[0]
}

// A listening connection that the server drops is replaced; its subscribers
// are woken, since releases may have been missed meanwhile, and hear later
// releases on the new connection.
func TestListenerReconnectsAndWakesSubscribers(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := newBackend(t, pool)
	ctx := testContext(t)
	key := lockenv.Name("lock:reconnect:")
	token := backend.NewToken()
	if g, err := b.TryAcquire(ctx, key, token, 20*time.Second); err != nil || !g.Acquired {
		t.Fatalf("TryAcquire = %+v, %v", g, err)
	}
	sub, err := b.Subscribe(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	pid := listenerPID(t, pool)
	var terminated bool
	if err := pool.QueryRow(ctx, `SELECT pg_terminate_backend($1, 10000)`, pid).Scan(&terminated); err != nil || !terminated {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, terminated, err)
	}
	select {
	case <-sub.Released():
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not woken after the listener reconnected")
	}
	if newPID := listenerPID(t, pool); newPID == pid {
		t.Errorf("listener still on the terminated backend %d", pid)
	}

	if ok, err := b.Release(ctx, key, token); !ok || err != nil {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	select {
	case <-sub.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("release after the reconnect not delivered")
	}
}

// The idle ping keeps the connection usable for notifications.
func TestIdleListenerPingsAndStillDelivers(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := pglock.NewWithHealthInterval(pool, 50*time.Millisecond)
	t.Cleanup(func() { _ = b.Close() })
	ctx := testContext(t)
	key := lockenv.Name("lock:idle:")
	token := backend.NewToken()
	if g, err := b.TryAcquire(ctx, key, token, 20*time.Second); err != nil || !g.Acquired {
		t.Fatalf("TryAcquire = %+v, %v", g, err)
	}
	sub, err := b.Subscribe(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pid := listenerPID(t, pool)
	time.Sleep(500 * time.Millisecond) // about ten pings
	select {
	case <-sub.Released():
		t.Fatal("woken with no release: the listener reconnected while idle")
	default:
	}
	if ok, err := b.Release(ctx, key, token); !ok || err != nil {
		t.Fatalf("Release = %v, %v", ok, err)
	}
	select {
	case <-sub.Released():
	case <-time.After(5 * time.Second):
		t.Fatal("release not delivered after idle pings")
	}
	var same bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&same); err != nil || !same {
		t.Errorf("the listening connection %d was replaced while idle (%v)", pid, err)
	}
}

func TestCloseEndsTheListener(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := pglock.New(pool)
	ctx := testContext(t)
	sub, err := b.Subscribe(ctx, lockenv.Name("lock:close:"))
	if err != nil {
		t.Fatal(err)
	}
	pid := listenerPID(t, pool)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_ = b.Close() // idempotent
	sub.Close()
	if _, err := b.Subscribe(ctx, "lock:after-close"); !errors.Is(err, lock.ErrUnavailable) {
		t.Errorf("Subscribe after Close: got %v, want ErrUnavailable", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var alive bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive); err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listening connection %d still open after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The rest of the Backend keeps working on the pool.
	if g, err := b.TryAcquire(ctx, "lock:after-close", backend.NewToken(), time.Second); err != nil || !g.Acquired {
		t.Errorf("TryAcquire after Close = %+v, %v", g, err)
	}
}

// backendCalls exercises every method that reaches PostgreSQL.
var backendCalls = map[string]func(context.Context, *pglock.Backend) error{
	"TryAcquire": func(ctx context.Context, b *pglock.Backend) error {
		_, err := b.TryAcquire(ctx, "lock:unavailable", backend.NewToken(), time.Second)
		return err
	},
	"Extend": func(ctx context.Context, b *pglock.Backend) error {
		_, err := b.Extend(ctx, "lock:unavailable", backend.NewToken(), time.Second)
		return err
	},
	"Release": func(ctx context.Context, b *pglock.Backend) error {
		_, err := b.Release(ctx, "lock:unavailable", backend.NewToken())
		return err
	},
	"Subscribe": func(ctx context.Context, b *pglock.Backend) error {
		sub, err := b.Subscribe(ctx, "lock:unavailable")
		if err == nil {
			sub.Close()
		}
		return err
	},
}

func TestUnreachableServerIsUnavailable(t *testing.T) {
	t.Parallel()
	pool := openPool(t, "postgres://x:y@127.0.0.1:1/db?connect_timeout=1")
	b := newBackend(t, pool)
	for name, call := range backendCalls {
		start := time.Now()
		if err := call(testContext(t), b); !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		}
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			t.Errorf("%s took %v to fail", name, elapsed)
		}
	}
	locker := lock.New(b, lock.Config{})
	t.Cleanup(locker.Close)
	for _, wait := range []time.Duration{0, time.Second} {
		_, err := locker.Acquire(testContext(t), "lock:unavailable", lock.Options{TTL: time.Second, Wait: wait})
		if !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Acquire (wait %v): got %v, want ErrUnavailable", wait, err)
		}
	}
}

// A request still in flight while the service shuts down gets an
// unavailable error, not an unclassified one.
func TestClosedPoolIsUnavailable(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	b := newBackend(t, pool)
	pool.Close()
	for name, call := range backendCalls {
		if name == "Subscribe" {
			continue // its connection is the Backend's own, not the pool's
		}
		if err := call(testContext(t), b); !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		}
	}
}

func TestExpiredDeadlineIsUnavailable(t *testing.T) {
	t.Parallel()
	b := newBackend(t, newPool(t))
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	for name, call := range backendCalls {
		err := call(ctx, b)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: got %v, want the deadline", name, err)
		}
		// Subscribe keeps the plain deadline: lock.Client reads a wait
		// that ran out while subscribing as "still held".
		if name != "Subscribe" && !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", name, err)
		}
	}
}

// TryAcquire's statement may wait for a concurrent acquirer's transaction and
// then find the lock taken by a row its snapshot does not show (a new row) or
// shows as free (an expired row taken over). It must still report the
// holder's remaining TTL.
func TestHeldByConcurrentAcquirerReportsRemaining(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]struct{ before, during string }{
		"new row": {
			during: `INSERT INTO locks (name, lock_until, locked_at, locked_by, fence)
				VALUES ($1, clock_timestamp() + interval '10 seconds', clock_timestamp(), 'concurrent', 1)`,
		},
		"expired row taken over": {
			before: `INSERT INTO locks (name, lock_until, locked_at, locked_by, fence)
				VALUES ($1, '-infinity', clock_timestamp(), NULL, 1)`,
			during: `UPDATE locks SET lock_until = clock_timestamp() + interval '10 seconds',
				locked_by = 'concurrent', fence = fence + 1 WHERE name = $1`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool := newPool(t)
			b := newBackend(t, pool)
			ctx := testContext(t)
			key := lockenv.Name("lock:race:")
			if setup.before != "" {
				if _, err := pool.Exec(ctx, setup.before, key); err != nil {
					t.Fatal(err)
				}
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			if _, err := tx.Exec(ctx, setup.during, key); err != nil {
				t.Fatal(err)
			}
			type result struct {
				grant backend.Grant
				err   error
			}
			done := make(chan result, 1)
			go func() {
				g, err := b.TryAcquire(ctx, key, backend.NewToken(), time.Second)
				done <- result{g, err}
			}()
			time.Sleep(300 * time.Millisecond) // TryAcquire waits on the row
			select {
			case r := <-done:
				t.Fatalf("TryAcquire returned %+v, %v before the concurrent transaction ended", r.grant, r.err)
			default:
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil || r.grant.Acquired {
				t.Fatalf("TryAcquire = %+v, %v; want held", r.grant, r.err)
			}
			if r.grant.Remaining <= 8*time.Second || r.grant.Remaining > 10*time.Second {
				t.Errorf("Remaining = %v, want the concurrent holder's (about 10s)", r.grant.Remaining)
			}
		})
	}
}
