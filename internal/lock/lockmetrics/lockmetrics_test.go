package lockmetrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// namespace is the service's: the tests check the metric names it exports.
const namespace = "seatlock"

// Waiters and watchdogs of the lock.Client must leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newObserver(t *testing.T) (*prometheus.Registry, *Observer) {
	t.Helper()
	reg := prometheus.NewRegistry()
	o, err := New(reg, "memory", Namespace(namespace))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return reg, o
}

// histogram returns the sample count and sum of the series of name whose
// labels include want, as gathered from reg.
func histogram(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, want) {
				return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
			}
		}
	}
	t.Fatalf("no %s series with labels %v", name, want)
	return 0, 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

func wantCount(t *testing.T, name string, c prometheus.Collector, want float64) {
	t.Helper()
	if got := testutil.ToFloat64(c); got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// wantCountSoon is wantCount for a count made on another goroutine just
// after the event the test saw: the lease's expiry timer ends the lease's
// context first and counts the loss after unlocking, so a test woken by
// the context can read the counter a moment too early.
func wantCountSoon(t *testing.T, name string, c prometheus.Collector, want float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(c) != want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	wantCount(t, name, c, want)
}

// counters is the exposition of the four counters, for GatherAndCompare.
func counters(backend string, acquired, held, failed, extOK, extFailed, lost, released, gone int) string {
	return fmt.Sprintf(`# HELP seatlock_lock_acquisitions_total %[1]s
# TYPE seatlock_lock_acquisitions_total counter
seatlock_lock_acquisitions_total{backend=%[2]q,outcome="acquired"} %[3]d
seatlock_lock_acquisitions_total{backend=%[2]q,outcome="error"} %[5]d
seatlock_lock_acquisitions_total{backend=%[2]q,outcome="held"} %[4]d
seatlock_lock_acquisitions_total{backend=%[2]q,outcome="sealed"} 0
# HELP seatlock_lock_extensions_total %[6]s
# TYPE seatlock_lock_extensions_total counter
seatlock_lock_extensions_total{backend=%[2]q,result="failed"} %[8]d
seatlock_lock_extensions_total{backend=%[2]q,result="ok"} %[7]d
# HELP seatlock_lock_lost_total %[9]s
# TYPE seatlock_lock_lost_total counter
seatlock_lock_lost_total{backend=%[2]q} %[10]d
# HELP seatlock_lock_releases_total %[11]s
# TYPE seatlock_lock_releases_total counter
seatlock_lock_releases_total{backend=%[2]q,result="gone"} %[13]d
seatlock_lock_releases_total{backend=%[2]q,result="released"} %[12]d
`, helpAcquisitions, backend, acquired, held, failed,
		helpExtensions, extOK, extFailed,
		helpLost, lost,
		helpReleases, released, gone)
}

var counterNames = []string{
	"seatlock_lock_acquisitions_total",
	"seatlock_lock_extensions_total",
	"seatlock_lock_lost_total",
	"seatlock_lock_releases_total",
}

// TestClientMetrics drives a real lock.Client over memlock through every
// path that reports to the Observer and checks each metric.
func TestClientMetrics(t *testing.T) {
	reg, o := newObserver(t)
	b := memlock.New()
	c := lock.New(b, lock.Config{Observer: o, MaxWait: 5 * time.Second})
	ctx := context.Background()
	const key = "seat:1:A1"

	// Every known series exists at zero before anything happens.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counters("memory", 0, 0, 0, 0, 0, 0, 0, 0)), counterNames...); err != nil {
		t.Fatalf("initial counters: %v", err)
	}
	if n := testutil.CollectAndCount(o.waits); n != 4 {
		t.Fatalf("wait series = %d, want 4 (one per outcome)", n)
	}

	// 1. Acquired, fail-fast: counted, no wait.
	first, err := c.Acquire(ctx, key, lock.Options{TTL: 10 * time.Second})
	if err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	wantCount(t, "acquired", o.acquired, 1)
	if n, _ := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "acquired"}); n != 0 {
		t.Errorf("fail-fast acquisition observed as a wait (%d samples)", n)
	}

	// 2. Held, fail-fast: counted, no wait.
	if _, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second}); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("fail-fast Acquire on a held key: %v, want ErrHeld", err)
	}
	wantCount(t, "held", o.held, 1)
	if n, _ := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "held"}); n != 0 {
		t.Errorf("fail-fast held call observed as a wait (%d samples)", n)
	}

	// 3. Held after a bounded wait: the wait timed out and is observed.
	const bounded = 50 * time.Millisecond
	if _, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: bounded}); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("bounded wait on a held key: %v, want ErrHeld", err)
	}
	wantCount(t, "held", o.held, 2)
	if n, sum := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "held"}); n != 1 || sum < bounded.Seconds() {
		t.Errorf("held wait: %d samples summing %vs, want 1 of at least %vs", n, sum, bounded.Seconds())
	}

	// 4. A wait woken by the release. The holder's TTL (10s) is longer
	// than the wait (5s), so only the release can end the wait in time.
	type result struct {
		lease lock.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() {
		l, err := c.Acquire(ctx, key, lock.Options{TTL: 10 * time.Second, Wait: 5 * time.Second})
		got <- result{l, err}
	}()
	time.Sleep(50 * time.Millisecond) // let the waiter subscribe
	if err := first.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("waiting Acquire: %v", r.err)
	}
	second := r.lease
	wantCount(t, "acquired", o.acquired, 2)
	if n, sum := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "acquired"}); n != 1 || sum <= 0 || sum >= 2.5 {
		t.Errorf("acquired wait: %d samples summing %vs, want 1 ended by the release (< 2.5s)", n, sum)
	}
	wantCount(t, "released", o.released, 1)

	// 5. A wait ended by the caller's context: held (the holder kept the
	// lock for as long as the caller waited), with its wait.
	_, heldBefore := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "held"})
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	began := time.Now()
	_, err = c.Acquire(short, key, lock.Options{TTL: time.Second, Wait: 5 * time.Second})
	call := time.Since(began).Seconds()
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("Acquire with an expiring context: %v, want ErrHeld wrapping DeadlineExceeded", err)
	}
	wantCount(t, "held", o.held, 3)
	wantCount(t, "error", o.failed, 0)
	// The context's 30 ms run from before Acquire starts its own clock, so
	// the recorded wait can be a little under 30 ms on a busy machine; it
	// is never longer than the call, and it is the call's wait, not the
	// zero of a fail-fast attempt.
	if n, sum := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "held"}); n != 2 || sum-heldBefore > call || sum-heldBefore < call/2 {
		t.Errorf("held wait: %d samples, the last %vs, want 2, the last between %vs and the call's %vs", n, sum-heldBefore, call/2, call)
	}
	// 6. Extend while held.
	if err := second.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	wantCount(t, "extensions ok", o.extendOK, 1)

	// 7. The key vanishes behind the holder's back: Extend finds it gone,
	// which is a failed extension and a lost lease.
	b.Delete(key)
	if err := second.Extend(ctx, 10*time.Second); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Extend after Delete: %v, want ErrNotHeld", err)
	}
	wantCount(t, "extensions failed", o.extendFailed, 1)
	wantCount(t, "lost", o.lost, 1)

	// 8. Releasing the lost lease: gone.
	if err := second.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Release of a lost lease: %v, want ErrNotHeld", err)
	}
	wantCount(t, "gone", o.gone, 1)

	// The whole picture, through the registry.
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counters("memory", 2, 3, 0, 1, 1, 1, 1, 1)), counterNames...); err != nil {
		t.Error(err)
	}
	if n, sum := histogram(t, reg, "seatlock_lock_hold_seconds", nil); n != 2 || sum < 0.05 {
		t.Errorf("hold: %d samples summing %vs, want 2 (first held >= 50ms)", n, sum)
	}
	if n := testutil.CollectAndCount(o.waits); n != 4 {
		t.Errorf("wait series = %d, want 4", n)
	}
	if n := testutil.CollectAndCount(o.hold); n != 1 {
		t.Errorf("hold series = %d, want 1", n)
	}
}

// A fixed-TTL lease that runs out is lost by its expiry timer; a watchdog
// lease is extended until released.
func TestLeaseLifetime(t *testing.T) {
	reg, o := newObserver(t)
	// The watchdog renews a third of the way into the TTL and the lease
	// is lost if no renewal lands before it ends. With a 30ms TTL that
	// left 20ms for the watchdog's timer goroutine to run, less than the
	// scheduling delay of a -race run on busy cores: the lease was lost
	// before its first extension (0 extensions, or Release: not held).
	const watchdogTTL = 900 * time.Millisecond
	c := lock.New(memlock.New(), lock.Config{Observer: o, WatchdogTTL: watchdogTTL})
	ctx := context.Background()

	expiring, err := c.Acquire(ctx, "expiring", lock.Options{TTL: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	<-expiring.Context().Done()
	if cause := context.Cause(expiring.Context()); cause != lock.ErrLeaseLost {
		t.Fatalf("cause = %v, want ErrLeaseLost", cause)
	}
	wantCountSoon(t, "lost", o.lost, 1)
	if err := expiring.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Release after expiry: %v, want ErrNotHeld", err)
	}
	wantCount(t, "gone", o.gone, 1)

	watched, err := c.Acquire(ctx, "watched", lock.Options{}) // TTL 0: watchdog every watchdogTTL/3
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * watchdogTTL)
	for testutil.ToFloat64(o.extendOK) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("watchdog extensions = %v after %v, want >= 3", testutil.ToFloat64(o.extendOK), 10*watchdogTTL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := watched.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wantCount(t, "released", o.released, 1)
	wantCount(t, "extensions failed", o.extendFailed, 0)
	wantCount(t, "lost", o.lost, 1)
	if n, sum := histogram(t, reg, "seatlock_lock_hold_seconds", map[string]string{"backend": "memory"}); n != 2 || sum < 0.05 {
		t.Errorf("hold: %d samples summing %vs, want 2, the watched one >= 30ms", n, sum)
	}
}

// Many clients contending for one key: every call is accounted for, and the
// race detector sees the Observer used concurrently.
func TestConcurrentWaiters(t *testing.T) {
	reg, o := newObserver(t)
	c := lock.New(memlock.New(), lock.Config{Observer: o})
	ctx := context.Background()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			l, err := c.Acquire(ctx, "hot", lock.Options{TTL: 5 * time.Second, Wait: 5 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond)
			errs <- l.Release(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(counters("memory", n, 0, 0, 0, 0, 0, n, 0)), counterNames...); err != nil {
		t.Error(err)
	}
	if got, _ := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "acquired"}); got != n {
		t.Errorf("acquired waits = %d, want %d (every call was allowed to wait)", got, n)
	}
	if got, _ := histogram(t, reg, "seatlock_lock_hold_seconds", nil); got != n {
		t.Errorf("holds = %d, want %d", got, n)
	}
}

func TestRegisterTwice(t *testing.T) {
	reg, _ := newObserver(t)
	o, err := New(reg, "memory", Namespace(namespace))
	if err == nil {
		t.Fatal("second New on the same registry and backend: no error")
	}
	if o != nil {
		t.Error("second New returned an Observer along with its error")
	}
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Errorf("error %v is not a prometheus.AlreadyRegisteredError", err)
	}

	// Another backend shares the registry.
	redis, err := New(reg, "redis", Namespace(namespace))
	if err != nil {
		t.Fatalf("New for a second backend: %v", err)
	}
	redis.Lost()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(`# HELP seatlock_lock_lost_total %s
# TYPE seatlock_lock_lost_total counter
seatlock_lock_lost_total{backend="memory"} 0
seatlock_lock_lost_total{backend="redis"} 1
`, helpLost)), "seatlock_lock_lost_total"); err != nil {
		t.Error(err)
	}
}

// A New that fails part way leaves nothing of its own registered. The clash
// is on the last metric New registers, so the five before it must be undone.
func TestNewFailureRegistersNothing(t *testing.T) {
	reg := prometheus.NewRegistry()
	clash := prometheus.NewGauge(prometheus.GaugeOpts{Name: "seatlock_lock_releases_total", Help: "not ours"})
	reg.MustRegister(clash)
	if _, err := New(reg, "memory", Namespace(namespace)); err == nil {
		t.Fatal("New with a clashing metric: no error")
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetHelp() != "not ours" {
		var names []string
		for _, mf := range mfs {
			names = append(names, mf.GetName())
		}
		t.Errorf("after a failed New the registry holds %v, want only the clashing gauge", names)
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	if _, err := New(nil, "memory", Namespace(namespace)); err == nil {
		t.Error("New(nil, ...): no error")
	}
	if _, err := New(prometheus.NewRegistry(), "", Namespace(namespace)); err == nil {
		t.Error(`New(reg, ""): no error`)
	}
}

// The metrics follow Prometheus naming conventions (units, _total, help).
func TestLint(t *testing.T) {
	reg, _ := newObserver(t)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// Only calls that waited are observed as waits, whatever the outcome.
func TestAcquireWaitOnlyWhenWaited(t *testing.T) {
	reg, o := newObserver(t)
	o.Acquired(lock.OutcomeHeld, 0)
	o.Acquired(lock.OutcomeHeld, 2*time.Second)
	o.Acquired(lock.OutcomeError, 0)
	wantCount(t, "held", o.held, 2)
	wantCount(t, "error", o.failed, 1)
	if n, sum := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "held"}); n != 1 || sum != 2 {
		t.Errorf("held waits: %d samples summing %v, want 1 of 2s", n, sum)
	}
	if n, _ := histogram(t, reg, "seatlock_lock_wait_seconds", map[string]string{"outcome": "error"}); n != 0 {
		t.Errorf("error waits: %d samples, want 0", n)
	}
}

// The namespace is the only part of the names New leaves to its caller:
// without one they start with "lock_", and each namespace is a registry's
// own set of metrics.
func TestNamespace(t *testing.T) {
	reg := prometheus.NewRegistry()
	plain, err := New(reg, "memory")
	if err != nil {
		t.Fatalf("New without Namespace: %v", err)
	}
	other, err := New(reg, "memory", Namespace("other"))
	if err != nil {
		t.Fatalf("New with another namespace on the same registry: %v", err)
	}
	plain.Lost()
	other.Lost()
	other.Lost()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(`# HELP lock_lost_total %[1]s
# TYPE lock_lost_total counter
lock_lost_total{backend="memory"} 1
# HELP other_lock_lost_total %[1]s
# TYPE other_lock_lost_total counter
other_lock_lost_total{backend="memory"} 2
`, helpLost)), "lock_lost_total", "other_lock_lost_total"); err != nil {
		t.Error(err)
	}
	var names []string
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	want := []string{
		"lock_acquisitions_total", "lock_extensions_total", "lock_hold_seconds",
		"lock_lost_total", "lock_releases_total", "lock_wait_seconds",
		"other_lock_acquisitions_total", "other_lock_extensions_total", "other_lock_hold_seconds",
		"other_lock_lost_total", "other_lock_releases_total", "other_lock_wait_seconds",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metric names %v, want %v", names, want)
	}
}
