// Package lockmetrics exports the figures of the lock port (lock.Observer) as
// Prometheus metrics, so that operators can tune the lease (Options.TTL, or
// Config.WatchdogTTL for watchdog leases), the wait of each call
// (Options.Wait) and its cap (Config.MaxWait) from what the callers actually
// see. With New(reg, backend, Namespace("app")) the metrics are:
//
//	app_lock_acquisitions_total{backend,outcome}  counter   acquired | held | sealed | error
//	app_lock_wait_seconds{backend,outcome}        histogram calls allowed to wait only
//	app_lock_hold_seconds{backend}                histogram acquisition to release
//	app_lock_extensions_total{backend,result}     counter   ok | failed
//	app_lock_lost_total{backend}                  counter
//	app_lock_releases_total{backend,result}       counter   released | gone
//
// Without Namespace the names start with "lock_". backend is a constant
// label given to New (for instance "redis"), so one registry can hold the
// Observers of several lock stores.
//
// Useful queries (per backend, with Namespace("app")):
//
//   - Timeout ratio of waiting calls:
//     rate(app_lock_wait_seconds_count{outcome="held"}[5m]) /
//     sum without (outcome) (rate(app_lock_wait_seconds_count[5m])).
//     High, with waits piling up at the configured wait: raise Options.Wait
//     (up to Config.MaxWait) if callers can afford it, otherwise shed load.
//   - Typical wait: histogram_quantile(0.95, rate(app_lock_wait_seconds_bucket{outcome="acquired"}[5m])).
//   - Typical hold vs the lease: histogram_quantile(0.99, rate(app_lock_hold_seconds_bucket[5m]))
//     should stay well below Options.TTL.
//   - rate(app_lock_releases_total{result="gone"}[5m]) or
//     rate(app_lock_lost_total[5m]) above zero: leases run out before
//     the work is done; Options.TTL is too short for this load.
package lockmetrics

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/lock"
)

// Label values of lock_extensions_total and lock_releases_total.
// Acquisition outcomes are lock.OutcomeAcquired, lock.OutcomeHeld,
// lock.OutcomeError and lock.OutcomeSealed.
const (
	ResultOK       = "ok"
	ResultFailed   = "failed"
	ResultReleased = "released"
	ResultGone     = "gone"
)

// Help texts, also for the tests.
const (
	helpAcquisitions = "Lock Acquire calls by outcome: acquired; held = another owner kept the lock " +
		"(at once for a fail-fast call, for the whole wait, or until the caller's context ended); " +
		"sealed = the key was sealed (its work is done for good, e.g. an item sold); error = lock store unreachable, or the caller's context ended before the lock was found held. Many held outcomes whose waits time " +
		"out (see lock_wait_seconds{outcome=\"held\"}): raise the wait (Options.Wait), up to " +
		"Config.MaxWait, or shed load. Errors point at the lock store."
	helpWaits = "Time spent in Acquire calls that were allowed to wait (wait > 0), by outcome; " +
		"fail-fast calls are not counted, and a waiting call that got a free lock at once " +
		"counts as a near-zero wait. outcome=\"held\" is a wait that timed out: compare its " +
		"rate with the other outcomes to get the timeout ratio. Waits of acquired calls " +
		"near the wait limit mean it is about to be too short."
	helpHold = "Time from acquiring a lock to releasing it (including releases that found it gone). " +
		"The high quantiles should stay well below the lease (Options.TTL); if they approach it, raise " +
		"the lease or speed up the work done under the lock."
	helpExtensions = "Lease extensions (watchdog or Extend) by result: ok, or failed (lock gone, " +
		"taken, or store error). Failures mean leases at risk: check the store, and " +
		"lock_lost_total."
	helpLost = "Leases found lost while held (TTL ran out, or the key was deleted or taken): " +
		"the work under them was cancelled. Any steady rate means the lease (Options.TTL) is too short " +
		"for the work, or the lock store lost keys."
	helpReleases = "Lease releases by result: released, or gone = the lock had already expired or " +
		"been taken by another owner when released. Many gone releases mean the lease (Options.TTL) is " +
		"too short for the work done under the lock."
)

// waitBuckets (seconds) span a fast local hand-over (1ms) to a minute, well
// above the default Config.MaxWait (10s). A wait that timed out takes
// slightly longer than the wait asked for, so it lands in the bucket above
// it.
var waitBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// holdBuckets (seconds) span a quick check-and-insert (1ms) to long watchdog
// leases (1m and beyond in +Inf); compare them with the leases asked for
// (Options.TTL).
var holdBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Observer is a lock.Observer that records into Prometheus metrics. Create it
// with New and pass it as lock.Config.Observer. It is safe for concurrent use
// and every method is a few atomic operations.
type Observer struct {
	acquisitions *prometheus.CounterVec
	waits        *prometheus.HistogramVec
	hold         prometheus.Histogram
	extensions   *prometheus.CounterVec
	lost         prometheus.Counter
	releases     *prometheus.CounterVec

	// Children of the known label values, resolved once so that the hot
	// path does not hash label values.
	acquired, held, failed, sealed             prometheus.Counter
	waitAcquired, waitHeld, waitEr, waitSealed prometheus.Observer
	extendOK, extendFailed                     prometheus.Counter
	released, gone                             prometheus.Counter
}

var _ lock.Observer = (*Observer)(nil)

// Option configures New.
type Option func(*options)

type options struct{ namespace string }

// Namespace puts namespace and "_" before every metric name, as
// prometheus.Opts.Namespace does: Namespace("app") names the acquisitions
// counter app_lock_acquisitions_total. Without it the names start with
// "lock_".
func Namespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace }
}

// New creates the lock metrics of backend (the value of their "backend"
// label, e.g. "redis" or "memory") and registers them with reg.
//
// It returns an error if reg is nil, backend is empty, or a metric cannot be
// registered — notably a prometheus.AlreadyRegisteredError when an Observer
// for the same backend and namespace is already in reg. On error nothing
// stays registered. Observers for different backends can share a registry.
func New(reg prometheus.Registerer, backend string, opts ...Option) (*Observer, error) {
	if reg == nil {
		return nil, errors.New("lockmetrics: nil Registerer")
	}
	if backend == "" {
		return nil, errors.New("lockmetrics: empty backend label")
	}
	var cfg options
	for _, opt := range opts {
		opt(&cfg)
	}
	labels := prometheus.Labels{"backend": backend}
	counter := func(name, help string) prometheus.CounterOpts {
		return prometheus.CounterOpts{Namespace: cfg.namespace, Subsystem: "lock", Name: name, Help: help, ConstLabels: labels}
	}
	histogram := func(name, help string, buckets []float64) prometheus.HistogramOpts {
		return prometheus.HistogramOpts{Namespace: cfg.namespace, Subsystem: "lock", Name: name, Help: help, ConstLabels: labels, Buckets: buckets}
	}
	o := &Observer{
		acquisitions: prometheus.NewCounterVec(counter("acquisitions_total", helpAcquisitions), []string{"outcome"}),
		waits:        prometheus.NewHistogramVec(histogram("wait_seconds", helpWaits, waitBuckets), []string{"outcome"}),
		hold:         prometheus.NewHistogram(histogram("hold_seconds", helpHold, holdBuckets)),
		extensions:   prometheus.NewCounterVec(counter("extensions_total", helpExtensions), []string{"result"}),
		lost:         prometheus.NewCounter(counter("lost_total", helpLost)),
		releases:     prometheus.NewCounterVec(counter("releases_total", helpReleases), []string{"result"}),
	}

	collectors := []prometheus.Collector{o.acquisitions, o.waits, o.hold, o.extensions, o.lost, o.releases}
	for i, c := range collectors {
		if err := reg.Register(c); err != nil {
			for _, done := range collectors[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("lockmetrics: register %s metrics: %w", backend, err)
		}
	}

	// Resolving the children also exports every known series at zero, so
	// that rate() and ratios work from the first scrape.
	o.acquired = o.acquisitions.WithLabelValues(string(lock.OutcomeAcquired))
	o.held = o.acquisitions.WithLabelValues(string(lock.OutcomeHeld))
	o.failed = o.acquisitions.WithLabelValues(string(lock.OutcomeError))
	o.sealed = o.acquisitions.WithLabelValues(string(lock.OutcomeSealed))
	o.waitAcquired = o.waits.WithLabelValues(string(lock.OutcomeAcquired))
	o.waitHeld = o.waits.WithLabelValues(string(lock.OutcomeHeld))
	o.waitEr = o.waits.WithLabelValues(string(lock.OutcomeError))
	o.waitSealed = o.waits.WithLabelValues(string(lock.OutcomeSealed))
	o.extendOK = o.extensions.WithLabelValues(ResultOK)
	o.extendFailed = o.extensions.WithLabelValues(ResultFailed)
	o.released = o.releases.WithLabelValues(ResultReleased)
	o.gone = o.releases.WithLabelValues(ResultGone)
	return o, nil
}

// Acquired implements lock.Observer. It counts the call under its outcome and,
// only when waited > 0 (the call was allowed to wait), observes waited in
// lock_wait_seconds. A fail-fast call (lock.Options.Wait zero, so
// waited zero) is not a wait and is left out of the histogram.
func (o *Observer) Acquired(outcome lock.Outcome, waited time.Duration) {
	var count prometheus.Counter
	var wait prometheus.Observer
	switch outcome {
	case lock.OutcomeAcquired:
		count, wait = o.acquired, o.waitAcquired
	case lock.OutcomeHeld:
		count, wait = o.held, o.waitHeld
	case lock.OutcomeError:
		count, wait = o.failed, o.waitEr
	case lock.OutcomeSealed:
		count, wait = o.sealed, o.waitSealed
	default: // not sent by lock.Client today; recorded as is
		count, wait = o.acquisitions.WithLabelValues(string(outcome)), o.waits.WithLabelValues(string(outcome))
	}
	count.Inc()
	if waited > 0 {
		wait.Observe(waited.Seconds())
	}
}

// Released implements lock.Observer: it observes the hold time and counts the
// release as gone when the lock had already expired or been taken, otherwise
// as released. (lock.Client reports gone only when the store answered that the
// lock was no longer ours; a release that failed with a store error counts as
// released, and the key then expires by its TTL.)
func (o *Observer) Released(held time.Duration, gone bool) {
	o.hold.Observe(held.Seconds())
	if gone {
		o.gone.Inc()
	} else {
		o.released.Inc()
	}
}

// Extended implements lock.Observer.
func (o *Observer) Extended(ok bool) {
	if ok {
		o.extendOK.Inc()
	} else {
		o.extendFailed.Inc()
	}
}

// Lost implements lock.Observer.
func (o *Observer) Lost() { o.lost.Inc() }
