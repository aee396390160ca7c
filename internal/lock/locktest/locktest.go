// Package locktest is the contract every backend.Backend must satisfy, run
// through lock.Client as users see it. Each adapter's tests call Run with a
// factory for a fresh backend.
package locktest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// Harness is one backend under test plus the faults only the test may cause.
type Harness struct {
	Backend backend.Backend
	// Delete removes key whoever holds it (an operator's DEL).
	Delete func(key string)
	// Wipe makes the store forget key's lock and fence counter, as
	// FLUSHALL, a restart without persistence or a failover to an empty
	// replica would (scoped to one key so that parallel tests survive it).
	Wipe func(key string)
}

// Run runs the contract against the backends newHarness makes.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := map[string]func(t *testing.T, h Harness){
		"ExclusiveUntilReleased":          testExclusive,
		"ManyGoroutinesExactlyOneWins":    testManyGoroutines,
		"ReleaseByOwnerOnly":              testReleaseByOwnerOnly,
		"ExtendByOwnerOnly":               testExtendByOwnerOnly,
		"ExpiryFreesKeyAndEndsLease":      testExpiry,
		"ReleaseAfterContextCancelled":    testReleaseAfterCancel,
		"WaitWokenByRelease":              testWaitWokenByRelease,
		"WaitBoundedByDeadline":           testWaitDeadline,
		"WaitBoundedByContext":            testWaitContext,
		"WaitRecheckedAtHolderTTL":        testWaitRecheck,
		"FencesStrictlyIncrease":          testFences,
		"FencesIncreaseAcrossWipe":        testFencesAcrossWipe,
		"WatchdogKeepsLongJobsLock":       testWatchdogKeeps,
		"WatchdogCancelsLeaseWhenDeleted": testWatchdogDetectsLoss,
		"WithLockReleasesAlways":          testWithLock,
		"LeaseOutlivesAcquireContext":     testLeaseOutlivesAcquireContext,
		"EndedContextNeverReachesStore":   testEndedContext,
		"WaitCutByContextIsHeld":          testWaitCutByContextIsHeld,
		"AmbiguousAcquireIsReleased":      testAmbiguousAcquireIsReleased,
		"AcquireIdempotentPerToken":       testAcquireIdempotentPerToken,
		"OwnershipCheck":                  testOwnershipCheck,
		"MultiAllOrNothing":               testMultiAllOrNothing,
		"MultiWaitWokenByRelease":         testMultiWaitWokenByRelease,
		"MultiLossOfOneKey":               testMultiLossOfOneKey,
		"MultiOverlappingSets":            testMultiOverlappingSets,
		"SealRefusesAtOnce":               testSealRefusesAtOnce,
		"SealWakesWaiters":                testSealWakesWaiters,
		"Unseal":                          testUnseal,
		"SealByOwnerOnly":                 testSealByOwnerOnly,
		"SealExpires":                     testSealExpires,
		"SealNoteRoundTrips":              testSealNote,
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newHarness(t))
		})
	}
}

// watchdogTTL is short so that watchdog tests see several extensions, and
// long enough that each extension lands in time on a busy machine: the
// watchdog renews a third of the way in, and the lease is lost at its end
// if no renewal has come back. At 300ms that left 200ms for a timer
// goroutine, a script round trip (to a cluster master) and the reply's
// handling, which a -race run on busy cores overran now and then
// (LeaseOutlivesAcquireContext: "lease lost").
const watchdogTTL = time.Second

// client is a Client of b, closed when the test ends so that no background
// release outlives it.
func client(t *testing.T, b backend.Backend) *lock.Client {
	return clientWaiting(t, b, 10*time.Second)
}

// clientWaiting is client with waits capped at maxWait.
func clientWaiting(t *testing.T, b backend.Backend, maxWait time.Duration) *lock.Client {
	c := lock.New(b, lock.Config{WatchdogTTL: watchdogTTL, MaxWait: maxWait})
	t.Cleanup(c.Close)
	return c
}

func newKey() string { return "lock:{contract:" + backend.NewToken()[:12] + "}:k" }

func mustAcquire(t *testing.T, c *lock.Client, key string, opts lock.Options) lock.Lease {
	t.Helper()
	l, err := c.Acquire(context.Background(), key, opts)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", key, err)
	}
	return l
}

func expectHeld(t *testing.T, err error) *lock.HeldError {
	t.Helper()
	var held *lock.HeldError
	if !errors.As(err, &held) || !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("got %v, want *lock.HeldError", err)
	}
	return held
}

func testExclusive(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	first := mustAcquire(t, c, key, lock.Options{TTL: 3 * time.Second})
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	held := expectHeld(t, err)
	if held.Remaining <= 2*time.Second || held.Remaining > 3*time.Second {
		t.Errorf("Remaining = %v, want in (2s, 3s]", held.Remaining)
	}
	if err := first.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := first.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Release: got %v, want ErrNotHeld", err)
	}
	if cause := context.Cause(first.Context()); cause != lock.ErrReleased {
		t.Errorf("lease context cause after Release = %v, want ErrReleased", cause)
	}
	second := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	_ = second.Release(context.Background())
}

func testManyGoroutines(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	const goroutines = 1000
	var (
		wins, held atomic.Int64
		wg         sync.WaitGroup
		start      = make(chan struct{})
		errs       = make(chan error, goroutines)
	)
	for range goroutines {
		wg.Go(func() {
			<-start
			_, err := c.Acquire(context.Background(), key, lock.Options{TTL: 30 * time.Second})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, lock.ErrHeld):
				held.Add(1)
			default:
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected Acquire error: %v", err)
	}
	if wins.Load() != 1 || held.Load() != goroutines-1 {
		t.Fatalf("wins = %d, held = %d; want 1 and %d", wins.Load(), held.Load(), goroutines-1)
	}
}

// expire waits until key can be taken again after its lease ran out.
func expire(t *testing.T, c *lock.Client, key string) lock.Lease {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := c.Acquire(context.Background(), key, lock.Options{TTL: 5 * time.Second})
		if err == nil {
			return l
		}
		_ = expectHeld(t, err)
		if time.Now().After(deadline) {
			t.Fatalf("%s never expired", key)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testReleaseByOwnerOnly(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	stale := mustAcquire(t, c, key, lock.Options{TTL: 50 * time.Millisecond})
	successor := expire(t, c, key)
	if err := stale.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("expired lease Release: got %v, want ErrNotHeld", err)
	}
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	_ = expectHeld(t, err) // the successor's lock survived
	if err := successor.Release(context.Background()); err != nil {
		t.Errorf("successor Release: %v", err)
	}
}

func testExtendByOwnerOnly(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	// A TTL a busy machine cannot outlast between the acquire and the
	// extend, and an extension that Remaining tells apart from it.
	l := mustAcquire(t, c, key, lock.Options{TTL: 2 * time.Second})
	if err := l.Extend(context.Background(), 10*time.Second); err != nil {
		t.Fatalf("owner Extend: %v", err)
	}
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	if held := expectHeld(t, err); held.Remaining <= 5*time.Second {
		t.Errorf("Remaining after Extend(10s) = %v", held.Remaining)
	}
	h.Delete(key)
	successor := mustAcquire(t, c, key, lock.Options{TTL: 3 * time.Second})
	if err := l.Extend(context.Background(), 3*time.Second); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Extend of a lost lease: got %v, want ErrNotHeld", err)
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("lease context cause = %v, want ErrLeaseLost", cause)
	}
	if err := successor.Release(context.Background()); err != nil {
		t.Errorf("successor Release after a foreign Extend: %v", err)
	}
}

func testExpiry(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{TTL: 100 * time.Millisecond})
	select {
	case <-l.Context().Done():
	case <-time.After(3 * time.Second):
		t.Fatal("fixed-TTL lease context not cancelled at expiry")
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	next := expire(t, c, key)
	_ = next.Release(context.Background())
}

func testReleaseAfterCancel(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	ctx, cancel := context.WithCancel(context.Background())
	l, err := c.Acquire(ctx, key, lock.Options{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release with a cancelled context: %v", err)
	}
	mustAcquire(t, c, key, lock.Options{TTL: time.Second})
}

// countingBackend counts TryAcquire calls, to tell waking from polling.
type countingBackend struct {
	backend.Backend
	tries atomic.Int64
}

func (b *countingBackend) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	b.tries.Add(1)
	return b.Backend.TryAcquire(ctx, key, token, ttl)
}

func testWaitWokenByRelease(t *testing.T, h Harness) {
	holderClient, key := client(t, h.Backend), newKey()
	counting := &countingBackend{Backend: h.Backend}
	waiterClient := client(t, counting)
	holder := mustAcquire(t, holderClient, key, lock.Options{TTL: 20 * time.Second})

	type result struct {
		lease lock.Lease
		err   error
		at    time.Time
	}
	done := make(chan result, 1)
	go func() {
		l, err := waiterClient.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
		done <- result{l, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // the waiter is subscribed and asleep
	triesBefore := counting.tries.Load()
	released := time.Now()
	if err := holder.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	defer func() { _ = r.lease.Release(context.Background()) }()
	latency := r.at.Sub(released)
	if latency > 2*time.Second {
		t.Fatalf("waiter woke %v after the release; the holder's TTL was 20s, so it was not woken by the release", latency)
	}
	// Two tries before sleeping (once, once more after subscribing), one
	// after the wake-up: a poller would have made dozens in 300 ms.
	if triesBefore > 2 || counting.tries.Load() > 3 {
		t.Errorf("TryAcquire calls: %d while waiting, %d in all; want 2 and 3 (no polling)", triesBefore, counting.tries.Load())
	}
	t.Logf("wake-up latency after release: %v", latency)
}

func testWaitDeadline(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	mustAcquire(t, c, key, lock.Options{TTL: 20 * time.Second})
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 300 * time.Millisecond})
	elapsed := time.Since(start)
	held := expectHeld(t, err)
	if elapsed < 300*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("waited %v, want about 300ms", elapsed)
	}
	if held.Remaining < 15*time.Second {
		t.Errorf("Remaining = %v, want the holder's TTL", held.Remaining)
	}
}

func testWaitContext(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	mustAcquire(t, c, key, lock.Options{TTL: 20 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("got %v, want the context's error", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Acquire returned %v after its context ended", elapsed)
	}
}

func testWaitRecheck(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	// The holder dies: no release, no message. Only its TTL frees the key.
	mustAcquire(t, c, key, lock.Options{TTL: 300 * time.Millisecond})
	start := time.Now()
	l, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 5 * time.Second})
	if err != nil {
		t.Fatalf("waiter stranded: %v", err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("waiter took %v for a holder with 300ms left", elapsed)
	}
}

func testFences(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	var last int64
	for i := range 20 {
		l := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
		if l.Fence() <= last {
			t.Fatalf("acquisition %d: fence %d not above %d", i, l.Fence(), last)
		}
		last = l.Fence()
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	other := mustAcquire(t, c, newKey(), lock.Options{TTL: time.Second})
	if other.Fence() <= 0 {
		t.Errorf("fence of a new key = %d, want positive", other.Fence())
	}
}

func testFencesAcrossWipe(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	before := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	_ = before.Release(context.Background())
	h.Wipe(key)
	after := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	if after.Fence() <= before.Fence() {
		t.Fatalf("fence after the store forgot everything = %d, not above %d", after.Fence(), before.Fence())
	}
}

func testWatchdogKeeps(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{}) // no TTL: watchdog
	time.Sleep(4 * watchdogTTL)
	if err := l.Context().Err(); err != nil {
		t.Fatalf("lease context ended while the watchdog should keep it: %v", context.Cause(l.Context()))
	}
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	_ = expectHeld(t, err)
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mustAcquire(t, c, key, lock.Options{TTL: time.Second})
}

func testWatchdogDetectsLoss(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{})
	h.Delete(key)
	select {
	case <-l.Context().Done():
	case <-time.After(5 * watchdogTTL):
		t.Fatal("watchdog did not notice the key was deleted")
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	if err := l.Release(context.Background()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of a lost lease: got %v, want ErrNotHeld", err)
	}
}

func testWithLock(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	boom := errors.New("job failed")
	var ran bool
	err := lock.WithLock(context.Background(), c, key, lock.Options{TTL: 5 * time.Second}, func(ctx context.Context, l lock.Lease) error {
		ran = true
		if l.Fence() <= 0 {
			t.Errorf("fn got fence %d", l.Fence())
		}
		if ctx.Err() != nil {
			t.Errorf("fn's context ended before fn ran: %v", context.Cause(ctx))
		}
		return boom
	})
	if !ran || !errors.Is(err, boom) {
		t.Fatalf("WithLock = %v (ran %v), want fn's error", err, ran)
	}
	// Released despite the error: the key is free.
	l := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	err = lock.WithLock(context.Background(), c, key, lock.Options{TTL: time.Second}, func(context.Context, lock.Lease) error {
		t.Error("fn ran while the lock was held")
		return nil
	})
	_ = expectHeld(t, err)
	_ = l.Release(context.Background())
}
