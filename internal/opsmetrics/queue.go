package opsmetrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/waitroom"
)

// Queue exports the waiting room's metrics. The counts (waiting, active)
// are the queues' own, read by every instance's rounds of admission: every
// instance reports the same, so take the max over instances, not the sum.
// Admissions and their waits are counted by the instance whose round
// admitted them: sum those.
type Queue struct {
	admitted prometheus.Counter
	waits    prometheus.Histogram

	mu     sync.Mutex
	counts map[int64]waitroom.Round
}

// NewQueue registers the waiting room's metrics on reg.
func NewQueue(reg prometheus.Registerer) (*Queue, error) {
	q := &Queue{
		counts: map[int64]waitroom.Round{},
		admitted: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatlock_queue_admitted_total",
			Help: "Buyers this instance's rounds of admission admitted."}),
		waits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seatlock_queue_admission_wait_seconds",
			Help:    "Time from joining a queue (or its opening, for the pre-queue) to admission.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}}),
	}
	sum := func(f func(waitroom.Round) int64) func() float64 {
		return func() float64 {
			q.mu.Lock()
			defer q.mu.Unlock()
			var n int64
			for _, r := range q.counts {
				n += f(r)
			}
			return float64(n)
		}
	}
	return q, register(reg, q.admitted, q.waits,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_queue_waiting",
			Help: "Buyers in the queues' lines (the pre-queues included), over every queue."},
			sum(func(r waitroom.Round) int64 { return r.InLine })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_queue_active",
			Help: "Buyers admitted and not expired, over every queue."},
			sum(func(r waitroom.Round) int64 { return r.Active })))
}

// Round implements waitroom.Observer.
func (q *Queue) Round(scheduleID int64, r waitroom.Round) {
	q.admitted.Add(float64(r.Admitted))
	for _, w := range r.Waits {
		q.waits.Observe(w.Seconds())
	}
	q.mu.Lock()
	q.counts[scheduleID] = waitroom.Round{InLine: r.InLine, Active: r.Active}
	q.mu.Unlock()
}

// Removed implements waitroom.Observer.
func (q *Queue) Removed(scheduleID int64) {
	q.mu.Lock()
	delete(q.counts, scheduleID)
	q.mu.Unlock()
}
