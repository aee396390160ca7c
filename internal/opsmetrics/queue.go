package opsmetrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/waitroom"
)

// Queue exports the waiting room's metrics. The counts (waiting, active)
// are the totals over every queue kept in the store, read by every
// instance's rounds of admission: every instance reports the same, so take
// the max over instances, not the sum. Admissions and their waits are
// counted by the instance whose round admitted them: sum those.
type Queue struct {
	admitted prometheus.Counter
	waits    prometheus.Histogram

	inLine, active atomic.Int64
}

// NewQueue registers the waiting room's metrics on reg.
func NewQueue(reg prometheus.Registerer) (*Queue, error) {
	q := &Queue{
		admitted: prometheus.NewCounter(prometheus.CounterOpts{Name: "seatlock_queue_admitted_total",
			Help: "Buyers this instance's rounds of admission admitted."}),
		waits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seatlock_queue_admission_wait_seconds",
			Help:    "Time from joining a queue (or its opening, for the pre-queue) to admission.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}}),
	}
	return q, register(reg, q.admitted, q.waits,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_queue_waiting",
			Help: "Buyers in the queues' lines (the pre-queues included), over every queue."},
			func() float64 { return float64(q.inLine.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_queue_active",
			Help: "Buyers admitted and not expired, over every queue."},
			func() float64 { return float64(q.active.Load()) }))
}

// Round implements waitroom.Observer.
func (q *Queue) Round(_ int64, r waitroom.Round) {
	q.admitted.Add(float64(r.Admitted))
	for _, w := range r.Waits {
		q.waits.Observe(w.Seconds())
	}
}

// Totals implements waitroom.Observer.
func (q *Queue) Totals(inLine, active int64) {
	q.inLine.Store(inLine)
	q.active.Store(active)
}
