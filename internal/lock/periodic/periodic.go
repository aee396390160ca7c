// Package periodic runs periodic jobs on every instance of the service and
// executes each of them on at most one instance per period, as ShedLock's
// @SchedulerLock does for Spring's @Scheduled methods.
//
// # How a tick works
//
// Every instance ticks every job at the same wall-clock instants, the
// multiples of Job.Every (like a cron schedule: with Every = time.Minute, at
// each full minute). At a tick the instance tries once, without waiting, to
// take the job's lock, Key(job.Name), with a TTL of LockAtMostFor:
//
//   - Held by someone else: the tick is skipped (logged at debug level and
//     counted in Stats.Skips). It is never queued or retried: the instance
//     that holds the lock runs, or has just run, this period.
//   - Taken: the job runs with a context derived from the lease's Context,
//     so it is cancelled if the lease is lost (see LockAtMostFor) or the
//     Runner is stopped. LeaseFrom gives the job its lease, whose Fence it
//     should pass to the system of record.
//   - The store cannot be reached: the tick is skipped (logged as a
//     warning, Stats.LockErrors). A job never runs without the lock.
//
// When the job returns (or panics; the panic is recovered) the lock is
// unlocked the ShedLock way. If less than LockAtLeastFor has passed since the
// tick's attempt began, the lock is not deleted: the lease is extended to the
// time left, so that the lock is held until LockAtLeastFor after the start,
// and then expires on its own. Otherwise the lease is released. Both are
// owner-checked: a lock that has meanwhile expired and been taken by another
// instance is never touched.
//
// Runner.RunOnce makes the same locked attempt on demand (as ShedLock locks a
// direct call of a @SchedulerLock method). Every attempt is counted in
// Runner.Stats and, if Config.Observe is set, reported as an Event.
//
// # Choosing the durations
//
// LockAtMostFor is the lock's TTL: a crashed holder blocks the job for at
// most that long. It must be well above the longest run: a run that reaches
// it loses its lease, its context is cancelled (context.Cause is
// lock.ErrLeaseLost, and Event.LeaseLost is set) and another instance may
// start the job while it still winds down.
//
// LockAtLeastFor keeps the other instances out after a short run. Ticks of
// different instances are only as close as their clocks: an instance whose
// clock lags by d ticks d later and would run the period again once the lock
// is gone. LockAtLeastFor must therefore exceed the clock skew between the
// instances (plus the lock store's latency) and stay below Every minus that
// skew, or the next period's ticks may all be skipped. A value a little under
// Every is the usual choice.
//
// # Guarantees and limits
//
// While every run ends within LockAtMostFor, no two instances run a job at
// the same time, and with LockAtLeastFor chosen as above a job starts at most
// once per period. It is at-most-once, not exactly-once: a period passes
// without a run when the store is unreachable, when a crashed holder's lock
// has not yet expired, when a run overran into it, or when no instance was
// up at the tick. Missed periods are not caught up.
//
// Time is kept by three clocks. The lock's expiry is the lock store's (Redis
// expires keys by its own clock); LockAtLeastFor is measured by the holder's
// monotonic clock from just before it asked for the lock; the tick instants
// are each instance's wall clock. The lock is only as reliable as the store:
// a Redis failover to a replica that had not yet received the lock forgets
// it, and the job may run twice in that period. Jobs whose effects must not
// be duplicated should write through the lease's Fence or be idempotent.
package periodic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
)

// KeyPrefix starts the lock key of every job.
const KeyPrefix = "shedlock:"

// Key is the lock key of the job named name: "shedlock:{name}". The braces
// are a Redis Cluster hash tag, so the lock and its fence counter share a
// slot. Every instance must use the same name for the same job.
func Key(name string) string { return KeyPrefix + "{" + name + "}" }

// Job is a periodic task.
type Job struct {
	// Name identifies the job across instances; it names the lock.
	Name string
	// Every is the period: the job is tried at each multiple of Every of
	// the wall clock.
	Every time.Duration
	// LockAtMostFor is the lock's TTL, the longest a run (or a crashed
	// holder) keeps the job locked. At least a millisecond.
	LockAtMostFor time.Duration
	// LockAtLeastFor is the shortest time the lock is kept from the start
	// of a run, however quickly the run ends. Zero releases the lock as
	// soon as the run ends. At most LockAtMostFor.
	LockAtLeastFor time.Duration
	// Run does the work. Its context ends when the lease is lost or the
	// Runner stops; Run should return promptly then. A panic in Run is
	// recovered and reported; one in a goroutine Run starts is not.
	Run func(ctx context.Context) error
}

// ErrInvalidJob is wrapped by New's error for a job it cannot run.
var ErrInvalidJob = errors.New("periodic: invalid job")

func (j Job) validate() error {
	var problem string
	switch {
	case j.Name == "":
		problem = "empty Name"
	case j.Run == nil:
		problem = "nil Run"
	case j.Every <= 0:
		problem = "Every must be positive"
	case j.LockAtMostFor < time.Millisecond:
		problem = "LockAtMostFor must be at least 1ms"
	case j.LockAtLeastFor < 0:
		problem = "LockAtLeastFor must not be negative"
	case j.LockAtLeastFor > j.LockAtMostFor:
		problem = "LockAtLeastFor must not exceed LockAtMostFor"
	default:
		return nil
	}
	return fmt.Errorf("%w %q: %s", ErrInvalidJob, j.Name, problem)
}

// Config tunes a Runner. The zero value is usable.
type Config struct {
	// Logger receives the Runner's logs; nil discards them.
	Logger *slog.Logger
	// Observe, if set, is called with the Event of every attempt, from the
	// goroutine of the attempt's job, after the lock was left. It must be
	// quick and safe for concurrent use (jobs tick concurrently).
	Observe func(Event)
	// Namespace separates deployments that share a lock store: the jobs
	// of runners with different namespaces never exclude one another.
	// Empty locks Key(name).
	Namespace string
}

// Runner ticks its jobs on one instance. Run it on every instance.
type Runner struct {
	locker  lock.Locker
	log     *slog.Logger
	observe func(Event)
	jobs    []*job
	byName  map[string]*job
	running atomic.Bool
}

type job struct {
	Job
	key string

	runs, failures, panics, skips, lockErrors atomic.Int64
}

// New returns a Runner of jobs that takes its locks from locker. It reports
// an error wrapping ErrInvalidJob for an invalid job or a duplicate name.
func New(locker lock.Locker, cfg Config, jobs ...Job) (*Runner, error) {
	r := &Runner{locker: locker, log: cfg.Logger, observe: cfg.Observe, byName: map[string]*job{}}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	for _, j := range jobs {
		if err := j.validate(); err != nil {
			return nil, err
		}
		if r.byName[j.Name] != nil {
			return nil, fmt.Errorf("%w %q: duplicate name", ErrInvalidJob, j.Name)
		}
		jb := &job{Job: j, key: Key(cfg.Namespace + j.Name)}
		r.jobs = append(r.jobs, jb)
		r.byName[j.Name] = jb
	}
	return r, nil
}

// ErrRunning is returned by Run when the Runner is already running.
var ErrRunning = errors.New("periodic: runner already running")

// ErrUnknownJob is returned by RunOnce for a name the Runner does not have.
var ErrUnknownJob = errors.New("periodic: unknown job")

// Run ticks every job until ctx is done, then waits for the runs in
// progress (whose contexts ctx's end cancels) and returns nil. A job's error
// or panic is logged and reported, and the job keeps its schedule. Run
// returns ErrRunning if the Runner is already running.
func (r *Runner) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer r.running.Store(false)
	var wg sync.WaitGroup
	for _, j := range r.jobs {
		wg.Go(func() { r.loop(ctx, j) })
	}
	wg.Wait()
	return nil
}

// RunOnce makes one attempt at the job named name now, exactly as a tick
// does (skipped if another instance holds the lock), and returns its Event.
// It is for tests and for triggering a job by hand; it does not need Run.
func (r *Runner) RunOnce(ctx context.Context, name string) (Event, error) {
	j := r.byName[name]
	if j == nil {
		return Event{}, fmt.Errorf("%w %q", ErrUnknownJob, name)
	}
	return r.attempt(ctx, j), nil
}

// loop ticks j at the multiples of j.Every until ctx is done. Attempts of
// one job are sequential: a run that outlasts the period skips the ticks it
// covered rather than queueing them.
func (r *Runner) loop(ctx context.Context, j *job) {
	tick := nextTick(time.Now(), time.Time{}, j.Every)
	timer := time.NewTimer(time.Until(tick))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		r.attempt(ctx, j)
		tick = nextTick(time.Now(), tick, j.Every)
		timer.Reset(time.Until(tick))
	}
}

// nextTick is the first multiple of every after now, and after the previous
// tick (so that a wall clock stepped back never ticks a period twice).
func nextTick(now, prev time.Time, every time.Duration) time.Time {
	next := now.Truncate(every).Add(every)
	if !prev.IsZero() && !next.After(prev) {
		next = prev.Add(every)
	}
	return next
}

// Outcome is what became of one attempt.
type Outcome string

// Outcomes of an attempt.
const (
	// Ran: the job ran and returned nil.
	Ran Outcome = "ran"
	// Failed: the job ran and returned an error or panicked (Event.Err).
	Failed Outcome = "failed"
	// Skipped: another instance held the lock; the job did not run.
	Skipped Outcome = "skipped"
	// LockFailed: the lock store failed (Event.Err); the job did not run.
	LockFailed Outcome = "lock_failed"
	// Canceled: the context ended before the lock was taken.
	Canceled Outcome = "canceled"
)

// Event describes one attempt, for Config.Observe and RunOnce.
type Event struct {
	Job     string
	Outcome Outcome
	// Started is when the attempt began, just before the lock was asked
	// for: LockAtLeastFor counts from here.
	Started time.Time
	// Took is how long the job ran (Ran and Failed only).
	Took time.Duration
	// Fence is the lease's fencing token (Ran and Failed only).
	Fence int64
	// Err is the job's error (a *PanicError for a panic) for Failed, the
	// lock store's for LockFailed, ctx's for Canceled.
	Err error
	// LeaseLost reports that the lease ended while the job ran (it ran
	// past LockAtMostFor, or the lock was deleted): another instance may
	// have run the job at the same time.
	LeaseLost bool
	// KeptFor is how long the lock was kept after the run to honour
	// LockAtLeastFor; zero when it was released.
	KeptFor time.Duration
	// UnlockErr is the error of that extension or release, if any. The
	// lock then expires at its TTL.
	UnlockErr error
}

// PanicError is the Event.Err of a job that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("periodic: job panicked: %v", e.Value) }

// Stats counts the attempts of one job on this instance.
type Stats struct {
	// Runs counts executions, failed ones included.
	Runs int64
	// Failures counts runs that returned an error or panicked.
	Failures int64
	// Panics counts runs that panicked (also in Failures).
	Panics int64
	// Skips counts attempts skipped because another instance held the lock.
	Skips int64
	// LockErrors counts attempts skipped because the lock store failed.
	LockErrors int64
}

// Stats returns the counters of the job named name (zero for an unknown
// name).
func (r *Runner) Stats(name string) Stats {
	j := r.byName[name]
	if j == nil {
		return Stats{}
	}
	return Stats{
		Runs:       j.runs.Load(),
		Failures:   j.failures.Load(),
		Panics:     j.panics.Load(),
		Skips:      j.skips.Load(),
		LockErrors: j.lockErrors.Load(),
	}
}

type leaseKey struct{}

// LeaseFrom returns the lease under which the job owning ctx runs, or nil
// outside a scheduled run. Jobs pass its Fence to the system of record, and
// may Extend it to outlast LockAtMostFor.
func LeaseFrom(ctx context.Context) lock.Lease {
	l, _ := ctx.Value(leaseKey{}).(lock.Lease)
	return l
}

// attempt makes one tick of j: try the lock, run, unlock.
func (r *Runner) attempt(ctx context.Context, j *job) Event {
	ev := Event{Job: j.Name, Started: time.Now()}
	log := r.log.With(slog.String("job", j.Name), slog.String("key", j.key))

	// The job runs until the Runner stops or the lease ends.
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lease, err := r.locker.Acquire(attemptCtx, j.key, lock.Options{TTL: j.LockAtMostFor})
	switch {
	case err == nil:
	case errors.Is(err, lock.ErrHeld):
		j.skips.Add(1)
		ev.Outcome = Skipped
		log.Debug("periodic: job locked by another instance, skipped", slog.Any("error", err))
		return r.report(ev)
	case ctx.Err() != nil:
		ev.Outcome, ev.Err = Canceled, err
		return r.report(ev)
	default:
		j.lockErrors.Add(1)
		ev.Outcome, ev.Err = LockFailed, err
		log.Warn("periodic: cannot take job lock, skipped", slog.Any("error", err))
		return r.report(ev)
	}

	ev.Fence = lease.Fence()
	log = log.With(slog.Int64("fence", ev.Fence))
	j.runs.Add(1)
	began := time.Now()
	work, stopWork := lock.Join(attemptCtx, lease)
	err = call(context.WithValue(work, leaseKey{}, lease), j.Run)
	stopWork()
	ev.Took = time.Since(began)
	ev.LeaseLost = errors.Is(context.Cause(lease.Context()), lock.ErrLeaseLost)
	ev.KeptFor, ev.UnlockErr = unlock(ctx, lease, j.LockAtLeastFor-time.Since(ev.Started))

	ev.Outcome = Ran
	if err != nil {
		ev.Outcome, ev.Err = Failed, err
		j.failures.Add(1)
		var p *PanicError
		if errors.As(err, &p) {
			j.panics.Add(1)
			log.Error("periodic: job panicked", slog.Any("panic", p.Value), slog.String("stack", string(p.Stack)))
		} else {
			log.Error("periodic: job failed", slog.Duration("took", ev.Took), slog.Any("error", err))
		}
	} else {
		log.Debug("periodic: job ran", slog.Duration("took", ev.Took), slog.Duration("kept", ev.KeptFor))
	}
	if ev.LeaseLost {
		log.Warn("periodic: job outlived its lock (LockAtMostFor too short?); another instance may have run it concurrently",
			slog.Duration("took", ev.Took), slog.Duration("lock_at_most_for", j.LockAtMostFor))
	} else if ev.UnlockErr != nil {
		log.Warn("periodic: unlock failed; the lock expires at its TTL", slog.Any("error", ev.UnlockErr))
	}
	return r.report(ev)
}

func (r *Runner) report(ev Event) Event {
	if r.observe != nil {
		r.observe(ev)
	}
	return ev
}

// call runs fn, turning a panic into a *PanicError.
func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}

// unlockTimeout bounds the extension or release after a run, which happens
// even when the Runner's context has ended.
const unlockTimeout = lock.DefaultReleaseTimeout

// unlock leaves the lock after a run, as ShedLock does: with left > 0 of
// LockAtLeastFor still to go it shortens the lease to left (rounded up to the
// store's millisecond) and lets it expire; otherwise it releases it.
func unlock(ctx context.Context, lease lock.Lease, left time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	if left > 0 {
		left = (left + time.Millisecond - 1).Truncate(time.Millisecond)
		if err := lock.ReleaseAfter(ctx, lease, left); err != nil {
			return 0, err
		}
		return left, nil
	}
	return 0, lease.Release(ctx)
}
