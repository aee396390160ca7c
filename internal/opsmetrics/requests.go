// Package opsmetrics exports what an operator watches besides the locks:
// requests by route and status, booking outcomes, open live seat-map
// streams, rate-limited requests, and the connection pools of PostgreSQL
// and Redis, as Prometheus metrics.
package opsmetrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Requests implements httpapi.Observer with Prometheus metrics.
type Requests struct {
	duration *prometheus.HistogramVec
	bookings *prometheus.CounterVec
	holds    *prometheus.CounterVec
	attempts *prometheus.HistogramVec
	streams  prometheus.Gauge
	limited  *prometheus.CounterVec

	// The series already used, by their labels: WithLabelValues hashes
	// the labels and takes a lock on every call, and every request would
	// make one or two.
	durations sync.Map // durationSeries -> prometheus.Observer
	outcomes  sync.Map // outcomeSeries -> prometheus.Counter
}

type durationSeries struct{ method, route, status string }

type outcomeSeries struct {
	vec     *prometheus.CounterVec
	outcome string
}

// The routes whose answers are booking and hold outcomes.
const (
	bookingRoute = "/reservations"
	holdRoute    = "/holds"
)

// NewRequests registers the request metrics with reg.
func NewRequests(reg prometheus.Registerer) (*Requests, error) {
	m := &Requests{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "seatlock_http_request_duration_seconds",
			Help: "Time to answer a request, by method, route pattern and status (499: the client went away first). Its _count is the request count.",
			// From the hot seat's sub-millisecond refusals to a Prefer:
			// wait that runs its course.
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route", "status"}),
		bookings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatlock_booking_outcomes_total",
			Help: `Answers to POST /reservations by outcome: "booked", or the problem code (seat_taken, seat_locked, ...).`,
		}, []string{"outcome"}),
		holds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatlock_hold_outcomes_total",
			Help: `Answers to POST /holds (named seats or best available) by outcome: "held", or the problem code (seats_unavailable, not_enough_seats, seats_contended, ...).`,
		}, []string{"outcome"}),
		attempts: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seatlock_best_available_attempts",
			Help:    `Choices of seats a best-available hold tried, by outcome ("held" or "refused": seats_contended, or an error after some attempts).`,
			Buckets: []float64{1, 2, 3, 4, 5},
		}, []string{"outcome"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "seatlock_sse_streams_open",
			Help: "Live seat-map streams open on this instance.",
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seatlock_rate_limited_total",
			Help: `Requests refused with 429 rate_limited, by the limit that refused them ("user" or "ip").`,
		}, []string{"limit"}),
	}
	for _, c := range []prometheus.Collector{m.duration, m.bookings, m.holds, m.attempts, m.streams, m.limited} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Both limits are there from the start, at zero, so that a rate of
	// refusals can be plotted before the first one.
	for _, limit := range []string{"user", "ip"} {
		m.limited.WithLabelValues(limit)
	}
	return m, nil
}

// Request records one answered request. route is the matched route
// pattern ("" when none matched, recorded as "unmatched" so that probing
// clients cannot make a series per path).
func (m *Requests) Request(method, route string, status int, code string, elapsed time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.durationOf(methodLabel(method), route, statusText(status)).Observe(elapsed.Seconds())
	if method != http.MethodPost {
		return
	}
	switch route {
	case bookingRoute:
		m.countOutcome(m.bookings, status == http.StatusOK, "booked", code)
	case holdRoute:
		m.countOutcome(m.holds, status == http.StatusCreated, "held", code)
	}
}

// countOutcome counts an answer in vec: as success when it succeeded, else
// under its problem code (an answer without one is not counted).
func (m *Requests) countOutcome(vec *prometheus.CounterVec, succeeded bool, success, code string) {
	if succeeded {
		code = success
	}
	if code != "" {
		m.outcomeOf(vec, code).Inc()
	}
}

// methodLabel is method if HTTP defines it, else "other": a client's
// invented methods make no series of their own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// durationOf is the request-duration series of the labels. Their number
// is bounded: routes are patterns (or "unmatched") and statuses the ones
// the service answers.
func (m *Requests) durationOf(method, route, status string) prometheus.Observer {
	key := durationSeries{method, route, status}
	if o, ok := m.durations.Load(key); ok {
		return o.(prometheus.Observer)
	}
	o, _ := m.durations.LoadOrStore(key, m.duration.WithLabelValues(method, route, status))
	return o.(prometheus.Observer)
}

// outcomeOf is vec's series of outcome: "booked", "held" or a problem code.
func (m *Requests) outcomeOf(vec *prometheus.CounterVec, outcome string) prometheus.Counter {
	key := outcomeSeries{vec, outcome}
	if c, ok := m.outcomes.Load(key); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.outcomes.LoadOrStore(key, vec.WithLabelValues(outcome))
	return c.(prometheus.Counter)
}

// BestAvailable records the choices a best-available hold tried.
func (m *Requests) BestAvailable(attempts int, held bool) {
	outcome := "refused"
	if held {
		outcome = "held"
	}
	m.attempts.WithLabelValues(outcome).Observe(float64(attempts))
}

// Streams records how many live seat-map streams are open.
func (m *Requests) Streams(open int64) { m.streams.Set(float64(open)) }

// RateLimited records a request refused by the named limit.
func (m *Requests) RateLimited(limit string) { m.limited.WithLabelValues(limit).Inc() }

// statusTexts holds every status as text: strconv.Itoa allocates the
// text of a number of three digits, on every request.
var statusTexts = func() (texts [600]string) {
	for status := range texts {
		texts[status] = strconv.Itoa(status)
	}
	return texts
}()

func statusText(status int) string {
	if status >= 0 && status < len(statusTexts) {
		return statusTexts[status]
	}
	return strconv.Itoa(status)
}
