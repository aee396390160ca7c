package periodic_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/lock/periodic"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// Runners, their job goroutines and the lease timers must all be gone.
// The servers of lockenv are stopped before goleak looks.
func TestMain(m *testing.M) { goleak.VerifyTestMain(lockenv.Wrap(m)) }

// store is a lock store shared by several instances.
type store struct {
	name string
	// lockers returns n lock.Clients over the same store, one per
	// simulated instance.
	lockers func(t *testing.T, n int) []lock.Locker
	// pttl returns the remaining TTL of key in the store, or -1 if the key
	// does not exist; nil when the store cannot say.
	pttl func(t *testing.T, key string) time.Duration
}

func redisStore() store {
	var probe *redis.Client
	return store{
		name: "redis",
		lockers: func(t *testing.T, n int) []lock.Locker {
			var ls []lock.Locker
			for range n {
				client := lockenv.Redis(t) // a connection pool per instance
				probe = client
				backend := redislock.New(client)
				t.Cleanup(func() { _ = backend.Close() })
				ls = append(ls, lock.New(backend, lock.Config{}))
			}
			return ls
		},
		pttl: func(t *testing.T, key string) time.Duration {
			d, err := probe.PTTL(context.Background(), key).Result()
			if err != nil {
				t.Fatalf("PTTL %s: %v", key, err)
			}
			if d < 0 {
				return -1
			}
			return d
		},
	}
}

func memStore() store {
	return store{
		name: "memory",
		lockers: func(t *testing.T, n int) []lock.Locker {
			backend := memlock.New()
			var ls []lock.Locker
			for range n {
				ls = append(ls, lock.New(backend, lock.Config{}))
			}
			return ls
		},
	}
}

func logger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newRunner(t *testing.T, l lock.Locker, cfg periodic.Config, jobs ...periodic.Job) *periodic.Runner {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = logger(t)
	}
	r, err := periodic.New(l, cfg, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// start runs r until the returned stop is called; stop waits for Run to
// return and fails the test if it does not within a few seconds.
func start(t *testing.T, r *periodic.Runner) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v, want nil", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after its context was cancelled")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// execution is one run of a job as the job itself saw it.
type execution struct {
	fence      int64
	start, end time.Time
}

// recorder collects the executions of a job and the events of attempts.
type recorder struct {
	mu     sync.Mutex
	execs  []execution
	events []periodic.Event
}

// job returns a Run that records each execution and takes d.
func (rec *recorder) job(d time.Duration) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		e := execution{fence: periodic.LeaseFrom(ctx).Fence(), start: time.Now()}
		time.Sleep(d)
		e.end = time.Now()
		rec.mu.Lock()
		rec.execs = append(rec.execs, e)
		rec.mu.Unlock()
		return nil
	}
}

func (rec *recorder) observe(ev periodic.Event) {
	rec.mu.Lock()
	rec.events = append(rec.events, ev)
	rec.mu.Unlock()
}

func (rec *recorder) snapshot() ([]execution, []periodic.Event) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.execs), slices.Clone(rec.events)
}

func TestNewRejectsInvalidJobs(t *testing.T) {
	ok := periodic.Job{Name: "j", Every: time.Second, LockAtMostFor: time.Second, LockAtLeastFor: time.Second,
		Run: func(context.Context) error { return nil }}
	for name, mutate := range map[string]func(j *periodic.Job){
		"empty name":          func(j *periodic.Job) { j.Name = "" },
		"nil run":             func(j *periodic.Job) { j.Run = nil },
		"zero every":          func(j *periodic.Job) { j.Every = 0 },
		"negative every":      func(j *periodic.Job) { j.Every = -time.Second },
		"zero at most":        func(j *periodic.Job) { j.LockAtMostFor, j.LockAtLeastFor = 0, 0 },
		"sub-ms at most":      func(j *periodic.Job) { j.LockAtMostFor, j.LockAtLeastFor = time.Microsecond, 0 },
		"negative at least":   func(j *periodic.Job) { j.LockAtLeastFor = -time.Second },
		"at least > at most":  func(j *periodic.Job) { j.LockAtLeastFor = 2 * time.Second },
		"duplicate job names": nil,
	} {
		t.Run(name, func(t *testing.T) {
			jobs := []periodic.Job{ok, ok}
			if mutate != nil {
				bad := ok
				mutate(&bad)
				jobs = []periodic.Job{bad}
			}
			if _, err := periodic.New(memStore().lockers(t, 1)[0], periodic.Config{}, jobs...); !errors.Is(err, periodic.ErrInvalidJob) {
				t.Errorf("New = %v, want ErrInvalidJob", err)
			}
		})
	}
	valid := ok
	valid.Name, valid.LockAtLeastFor = "j2", 0
	if _, err := periodic.New(memStore().lockers(t, 1)[0], periodic.Config{}, ok, valid, periodic.Job{
		Name: "other", Every: time.Second, LockAtMostFor: time.Second, Run: ok.Run}); err != nil {
		t.Errorf("New with valid jobs: %v", err)
	}
}

// Three instances tick the same job at the same instants; each period
// exactly one of them runs it and the others skip.
func TestOneExecutionPerPeriodAcrossInstances(t *testing.T) {
	t.Parallel()
	const (
		every   = 200 * time.Millisecond
		atLeast = 150 * time.Millisecond
		atMost  = time.Second
		runFor  = 1100 * time.Millisecond
	)
	name := lockenv.Name("report-")
	var rec recorder
	var runners []*periodic.Runner
	for _, l := range redisStore().lockers(t, 3) {
		runners = append(runners, newRunner(t, l, periodic.Config{Observe: rec.observe}, periodic.Job{
			Name: name, Every: every, LockAtMostFor: atMost, LockAtLeastFor: atLeast, Run: rec.job(20 * time.Millisecond),
		}))
	}
	began := time.Now()
	var stops []func()
	for _, r := range runners {
		stops = append(stops, start(t, r))
	}
	time.Sleep(runFor)
	ended := time.Now()
	for _, stop := range stops {
		stop()
	}

	execs, events := rec.snapshot()
	// Ticks fall on the multiples of every inside the window.
	periods := 0
	for tick := began.Truncate(every).Add(every); tick.Before(ended); tick = tick.Add(every) {
		periods++
	}
	if n := len(execs); n < periods-1 || n > periods+1 {
		t.Errorf("%d executions in %d periods, want one per period (±1 at the window's edges)", n, periods)
	}
	var runs, skips int64
	for _, r := range runners {
		runs += r.Stats(name).Runs
		skips += r.Stats(name).Skips
	}
	if runs != int64(len(execs)) {
		t.Errorf("Stats.Runs sum to %d, the job ran %d times", runs, len(execs))
	}
	if skips < int64(len(execs)) {
		t.Errorf("%d skips for %d executions on three instances: the losers of each tick should skip", skips, len(execs))
	}

	// Structure: executions never overlap, each starts at least
	// LockAtLeastFor after the previous attempt that ran began, fences grow,
	// and no period has two.
	started := map[int64]time.Time{} // fence → Event.Started
	for _, ev := range events {
		switch ev.Outcome {
		case periodic.Ran:
			started[ev.Fence] = ev.Started
			if ev.KeptFor <= 0 || ev.KeptFor > atLeast {
				t.Errorf("a 20ms run kept the lock for %v, want in (0, %v]", ev.KeptFor, atLeast)
			}
		case periodic.Skipped, periodic.Canceled:
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
	slices.SortFunc(execs, func(a, b execution) int { return a.start.Compare(b.start) })
	periodsSeen := map[time.Time]bool{}
	for i, e := range execs {
		anchor, ok := started[e.fence]
		if !ok {
			t.Fatalf("execution with fence %d has no Ran event", e.fence)
		}
		period := anchor.Truncate(every)
		if periodsSeen[period] {
			t.Errorf("two executions in the period starting %v", period)
		}
		periodsSeen[period] = true
		if i == 0 {
			continue
		}
		prev := execs[i-1]
		if e.start.Before(prev.end) {
			t.Errorf("executions overlap: %v–%v and %v–%v", prev.start, prev.end, e.start, e.end)
		}
		if e.fence <= prev.fence {
			t.Errorf("fence %d after %d: not increasing", e.fence, prev.fence)
		}
		// A 5ms allowance for the store's millisecond clock.
		if gap := e.start.Sub(started[prev.fence]); gap < atLeast-5*time.Millisecond {
			t.Errorf("execution started %v after the previous one's attempt, want >= LockAtLeastFor %v", gap, atLeast)
		}
	}
}

// A run of a millisecond keeps the lock for LockAtLeastFor: it shortens the
// lease instead of deleting the key, so another instance's attempt 100ms later
// skips, and one after LockAtLeastFor runs.
func TestLockAtLeastForKeepsOthersOutAfterAFastRun(t *testing.T) {
	t.Parallel()
	const atLeast = 500 * time.Millisecond
	for _, s := range []store{memStore(), redisStore()} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			name := lockenv.Name("fast-")
			var rec recorder
			job := periodic.Job{Name: name, Every: time.Hour, LockAtMostFor: 5 * time.Second, LockAtLeastFor: atLeast,
				Run: rec.job(time.Millisecond)}
			ls := s.lockers(t, 2)
			a, b := newRunner(t, ls[0], periodic.Config{}, job), newRunner(t, ls[1], periodic.Config{}, job)
			ctx := context.Background()

			first, err := a.RunOnce(ctx, name)
			if err != nil || first.Outcome != periodic.Ran {
				t.Fatalf("first attempt: %+v, %v; want it to run", first, err)
			}
			if first.KeptFor <= 0 || first.KeptFor > atLeast {
				t.Errorf("KeptFor = %v, want the rest of LockAtLeastFor, in (0, %v]", first.KeptFor, atLeast)
			}
			if s.pttl != nil {
				// Not deleted, and shortened from LockAtMostFor (5s) to
				// what is left of LockAtLeastFor.
				if pttl := s.pttl(t, periodic.Key(name)); pttl <= 0 || pttl > atLeast {
					t.Errorf("PTTL %s after the run = %v, want in (0, %v]", periodic.Key(name), pttl, atLeast)
				}
			}

			time.Sleep(100 * time.Millisecond)
			if ev, _ := b.RunOnce(ctx, name); ev.Outcome != periodic.Skipped {
				t.Errorf("attempt 100ms after a fast run: %v, want skipped", ev.Outcome)
			}
			if st := b.Stats(name); st.Skips != 1 || st.Runs != 0 {
				t.Errorf("second instance's stats %+v, want one skip and no run", st)
			}

			time.Sleep(time.Until(first.Started.Add(atLeast + 50*time.Millisecond)))
			if ev, _ := b.RunOnce(ctx, name); ev.Outcome != periodic.Ran {
				t.Errorf("attempt after LockAtLeastFor: %v (%v), want it to run", ev.Outcome, ev.Err)
			}
			if execs, _ := rec.snapshot(); len(execs) != 2 {
				t.Errorf("%d executions, want 2", len(execs))
			}
		})
	}
}

// With LockAtLeastFor zero the lock is released (deleted) right after the
// run, so another instance can run at once.
func TestZeroLockAtLeastForReleases(t *testing.T) {
	t.Parallel()
	s := redisStore()
	name := lockenv.Name("release-")
	job := periodic.Job{Name: name, Every: time.Hour, LockAtMostFor: 5 * time.Second,
		Run: func(context.Context) error { return nil }}
	ls := s.lockers(t, 2)
	a, b := newRunner(t, ls[0], periodic.Config{}, job), newRunner(t, ls[1], periodic.Config{}, job)
	ev, _ := a.RunOnce(context.Background(), name)
	if ev.Outcome != periodic.Ran || ev.KeptFor != 0 || ev.UnlockErr != nil {
		t.Fatalf("event %+v, want a run that released", ev)
	}
	if pttl := s.pttl(t, periodic.Key(name)); pttl != -1 {
		t.Errorf("PTTL after release = %v, want the key gone", pttl)
	}
	if ev, _ := b.RunOnce(context.Background(), name); ev.Outcome != periodic.Ran {
		t.Errorf("other instance right after: %v, want it to run", ev.Outcome)
	}
}

// Under Run, a LockAtLeastFor longer than the period spaces the executions
// by LockAtLeastFor, whichever instance runs them.
func TestLockAtLeastForSpacesRunsUnderRun(t *testing.T) {
	t.Parallel()
	const atLeast = 300 * time.Millisecond
	name := lockenv.Name("spaced-")
	var rec recorder
	job := periodic.Job{Name: name, Every: 50 * time.Millisecond, LockAtMostFor: time.Second, LockAtLeastFor: atLeast,
		Run: rec.job(time.Millisecond)}
	var stops []func()
	var runners []*periodic.Runner
	for _, l := range memStore().lockers(t, 2) {
		r := newRunner(t, l, periodic.Config{Observe: rec.observe}, job)
		runners = append(runners, r)
		stops = append(stops, start(t, r))
	}
	time.Sleep(time.Second)
	for _, stop := range stops {
		stop()
	}
	execs, events := rec.snapshot()
	if len(execs) < 2 || len(execs) > 4 {
		t.Errorf("%d executions in 1s with LockAtLeastFor %v, want 2 to 4", len(execs), atLeast)
	}
	started := map[int64]time.Time{}
	for _, ev := range events {
		if ev.Outcome == periodic.Ran {
			started[ev.Fence] = ev.Started
		}
	}
	slices.SortFunc(execs, func(a, b execution) int { return a.start.Compare(b.start) })
	for i := 1; i < len(execs); i++ {
		if gap := execs[i].start.Sub(started[execs[i-1].fence]); gap < atLeast {
			t.Errorf("execution %d started %v after the previous attempt, want >= %v", i, gap, atLeast)
		}
	}
	if skips := runners[0].Stats(name).Skips + runners[1].Stats(name).Skips; skips < 5 {
		t.Errorf("%d skips, want the ticks inside LockAtLeastFor skipped", skips)
	}
}

// A holder that dies without unlocking blocks the job until LockAtMostFor,
// then the next tick runs it.
func TestCrashedHoldersLockFreesAfterLockAtMostFor(t *testing.T) {
	t.Parallel()
	const atMost = 600 * time.Millisecond
	name := lockenv.Name("crash-")
	ls := redisStore().lockers(t, 2)

	crashedAt := time.Now()
	crashed, err := ls[0].Acquire(context.Background(), periodic.Key(name), lock.Options{TTL: atMost})
	if err != nil {
		t.Fatal(err)
	}
	// The crashed instance never releases: its lock only expires.

	ran := make(chan execution, 1)
	r := newRunner(t, ls[1], periodic.Config{}, periodic.Job{
		Name: name, Every: 50 * time.Millisecond, LockAtMostFor: atMost, LockAtLeastFor: 10 * time.Millisecond,
		Run: func(ctx context.Context) error {
			select {
			case ran <- execution{fence: periodic.LeaseFrom(ctx).Fence(), start: time.Now()}:
			default:
			}
			return nil
		},
	})
	stop := start(t, r)
	var first execution
	select {
	case first = <-ran:
	case <-time.After(atMost + 3*time.Second):
		t.Fatal("the job never ran after the crashed holder's lock expired")
	}
	stop()

	// The store's clock counts in milliseconds: a few of slack.
	if waited := first.start.Sub(crashedAt); waited < atMost-5*time.Millisecond {
		t.Errorf("ran %v after the crash, before LockAtMostFor %v", waited, atMost)
	}
	if first.fence <= crashed.Fence() {
		t.Errorf("fence %d not above the crashed holder's %d", first.fence, crashed.Fence())
	}
	if st := r.Stats(name); st.Skips < 3 || st.Runs < 1 {
		t.Errorf("stats %+v, want the ticks during the crashed lock skipped, then a run", st)
	}
}

// A run that outlives LockAtMostFor has its context cancelled with
// lock.ErrLeaseLost and is reported; the lock is free for others.
func TestRunPastLockAtMostForLosesTheLease(t *testing.T) {
	t.Parallel()
	name := lockenv.Name("slow-")
	var cause error
	job := periodic.Job{Name: name, Every: time.Hour, LockAtMostFor: 100 * time.Millisecond,
		Run: func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				cause = context.Cause(ctx)
				return ctx.Err()
			case <-time.After(5 * time.Second):
				return errors.New("context not cancelled at LockAtMostFor")
			}
		}}
	ls := memStore().lockers(t, 2)
	a, b := newRunner(t, ls[0], periodic.Config{}, job), newRunner(t, ls[1], periodic.Config{}, job)
	ev, _ := a.RunOnce(context.Background(), name)
	if !ev.LeaseLost || ev.Outcome != periodic.Failed || !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("event %+v, cause %v; want a lost lease reported and ErrLeaseLost as the cause", ev, cause)
	}
	if ev, _ := b.RunOnce(context.Background(), name); ev.Outcome != periodic.Failed || ev.Fence == 0 {
		t.Errorf("other instance after the lost lease: %+v, want it to take the lock", ev)
	}
}

// Errors and panics are reported and counted; the runner keeps ticking every
// job.
func TestErrorsAndPanicsDoNotStopTheRunner(t *testing.T) {
	t.Parallel()
	prefix := lockenv.Name("faulty-")
	boom := errors.New("boom")
	var mu sync.Mutex
	var panics []*periodic.PanicError
	observe := func(ev periodic.Event) {
		var p *periodic.PanicError
		if errors.As(ev.Err, &p) {
			mu.Lock()
			panics = append(panics, p)
			mu.Unlock()
		}
	}
	mk := func(suffix string, run func(context.Context) error) periodic.Job {
		return periodic.Job{Name: prefix + suffix, Every: 20 * time.Millisecond, LockAtMostFor: time.Second, Run: run}
	}
	r := newRunner(t, memStore().lockers(t, 1)[0], periodic.Config{Observe: observe},
		mk("fails", func(context.Context) error { return boom }),
		mk("panics", func(context.Context) error { panic("kaboom") }),
		mk("ok", func(context.Context) error { return nil }),
	)
	stop := start(t, r)
	deadline := time.Now().Add(5 * time.Second)
	for _, s := range []string{"fails", "panics", "ok"} {
		for r.Stats(prefix+s).Runs < 3 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop()

	for _, s := range []string{"fails", "panics", "ok"} {
		if st := r.Stats(prefix + s); st.Runs < 3 {
			t.Errorf("%s ran %d times, want the runner to keep going", s, st.Runs)
		}
	}
	if st := r.Stats(prefix + "fails"); st.Failures != st.Runs || st.Panics != 0 {
		t.Errorf("failing job: %+v, want every run a failure", st)
	}
	if st := r.Stats(prefix + "panics"); st.Panics != st.Runs || st.Failures != st.Runs {
		t.Errorf("panicking job: %+v, want every run a panic", st)
	}
	if st := r.Stats(prefix + "ok"); st.Failures != 0 {
		t.Errorf("healthy job: %+v, want no failure", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(panics) == 0 || panics[0].Value != "kaboom" || len(panics[0].Stack) == 0 {
		t.Errorf("panic events %v, want the value and a stack", panics)
	}
}

// Cancelling Run's context cancels the running job's context, and Run returns
// only after the job has returned.
func TestRunWaitsForRunningJobs(t *testing.T) {
	t.Parallel()
	name := lockenv.Name("wind-down-")
	started := make(chan struct{})
	var finished bool // written by the job, read after Run returned
	var cause error
	r := newRunner(t, memStore().lockers(t, 1)[0], periodic.Config{}, periodic.Job{
		Name: name, Every: 20 * time.Millisecond, LockAtMostFor: 10 * time.Second,
		Run: func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			cause = context.Cause(ctx)
			time.Sleep(200 * time.Millisecond) // winding down
			finished = true
			return ctx.Err()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	<-started
	if err := r.Run(ctx); !errors.Is(err, periodic.ErrRunning) {
		t.Errorf("second Run = %v, want ErrRunning", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	if !finished {
		t.Error("Run returned before the running job did")
	}
	if !errors.Is(cause, context.Canceled) {
		t.Errorf("job context cause %v, want context.Canceled", cause)
	}
	if st := r.Stats(name); st.Runs != 1 {
		t.Errorf("stats %+v, want exactly one run", st)
	}
}

// No run without the lock: a store that cannot be reached skips the tick.
func TestUnreachableStoreSkips(t *testing.T) {
	t.Parallel()
	name := lockenv.Name("down-")
	ran := false
	r := newRunner(t, downLocker{}, periodic.Config{}, periodic.Job{
		Name: name, Every: time.Hour, LockAtMostFor: time.Second,
		Run: func(context.Context) error { ran = true; return nil },
	})
	ev, err := r.RunOnce(context.Background(), name)
	if err != nil || ev.Outcome != periodic.LockFailed || !errors.Is(ev.Err, lock.ErrUnavailable) || ran {
		t.Errorf("event %+v, %v, ran %v; want LockFailed wrapping ErrUnavailable and no run", ev, err, ran)
	}
	if st := r.Stats(name); st.LockErrors != 1 || st.Runs != 0 {
		t.Errorf("stats %+v, want one lock error", st)
	}
	if _, err := r.RunOnce(context.Background(), "nope"); !errors.Is(err, periodic.ErrUnknownJob) {
		t.Errorf("RunOnce of an unknown job = %v, want ErrUnknownJob", err)
	}
}

type downLocker struct{}

func (downLocker) Acquire(context.Context, string, lock.Options) (lock.Lease, error) {
	return nil, fmt.Errorf("dial: %w", lock.ErrUnavailable)
}

func TestLeaseFrom(t *testing.T) {
	t.Parallel()
	if periodic.LeaseFrom(context.Background()) != nil {
		t.Error("LeaseFrom outside a run is not nil")
	}
	name := lockenv.Name("lease-")
	var key string
	var fence int64
	r := newRunner(t, memStore().lockers(t, 1)[0], periodic.Config{}, periodic.Job{
		Name: name, Every: time.Hour, LockAtMostFor: time.Second,
		Run: func(ctx context.Context) error {
			l := periodic.LeaseFrom(ctx)
			key, fence = l.Key(), l.Fence()
			return nil
		},
	})
	ev, _ := r.RunOnce(context.Background(), name)
	if key != periodic.Key(name) || fence != ev.Fence || fence == 0 {
		t.Errorf("lease in the job: key %q fence %d; want %q and the event's fence %d", key, fence, periodic.Key(name), ev.Fence)
	}
}

// Runners of different namespaces (deployments sharing a lock store) do
// not exclude one another; runners of one namespace do.
func TestNamespacesSeparateDeployments(t *testing.T) {
	t.Parallel()
	shared := memlock.New()
	job := periodic.Job{Name: "sweep", Every: time.Hour, LockAtMostFor: time.Minute, LockAtLeastFor: time.Minute,
		Run: func(context.Context) error { return nil }}
	outcome := func(namespace string) periodic.Outcome {
		r, err := periodic.New(lock.New(shared, lock.Config{}), periodic.Config{Namespace: namespace}, job)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := r.RunOnce(context.Background(), "sweep")
		if err != nil {
			t.Fatal(err)
		}
		return ev.Outcome
	}
	for _, tt := range []struct {
		namespace string
		want      periodic.Outcome
	}{
		{"staging/", periodic.Ran},
		{"production/", periodic.Ran},
		{"staging/", periodic.Skipped},
		{"", periodic.Ran},
		{"", periodic.Skipped},
	} {
		if got := outcome(tt.namespace); got != tt.want {
			t.Errorf("namespace %q: %s, want %s", tt.namespace, got, tt.want)
		}
	}
}
