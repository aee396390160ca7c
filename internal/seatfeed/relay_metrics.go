package seatfeed

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RelayMetrics are the relay's metrics, all named seatlock_seat_changes_...
type RelayMetrics struct {
	relayed, failures, dropped prometheus.Counter
}

func newRelayMetrics() *RelayMetrics {
	return &RelayMetrics{
		relayed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "seatlock", Name: "seat_changes_relayed_total",
			Help: "Seat changes this instance relayed from the outbox to the live seat map's streams."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "seatlock", Name: "seat_changes_relay_failures_total",
			Help: "Relay passes that failed (PostgreSQL or Redis); their changes stay in the outbox and are retried."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "seatlock", Name: "seat_changes_dropped_total",
			Help: "Seat changes deleted unrelayed because the outbox was over its bound (SEAT_CHANGES_MAX_BACKLOG)."}),
	}
}

// backlogTimeout bounds the query of one scrape.
const backlogTimeout = time.Second

// NewRelayMetrics registers the relay's metrics on reg: the counters of this
// instance, and the outbox's backlog (rows) and lag (age of its oldest
// change, in seconds), read from PostgreSQL at each scrape, so that every
// instance reports them whether or not it relays, and they grow while no
// relay runs. A scrape that cannot read them (PostgreSQL slow or down,
// backlogTimeout) leaves the two gauges out and logs why.
func NewRelayMetrics(reg prometheus.Registerer, outbox Outbox, logger *slog.Logger) (*RelayMetrics, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := newRelayMetrics()
	backlog := &backlogCollector{outbox: outbox, log: logger,
		rows: prometheus.NewDesc("seatlock_seat_changes_backlog",
			"Seat changes committed and not yet relayed to the live seat map (exact up to 100,000; an upper bound past it).", nil, nil),
		lag: prometheus.NewDesc("seatlock_seat_changes_lag_seconds",
			"Age of the oldest seat change not yet relayed (0 when none is pending).", nil, nil),
	}
	for _, c := range []prometheus.Collector{m.relayed, m.failures, m.dropped, backlog} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

type backlogCollector struct {
	outbox    Outbox
	log       *slog.Logger
	rows, lag *prometheus.Desc
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rows
	ch <- c.lag
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	rows, oldest, err := c.outbox.Backlog(ctx)
	if err != nil {
		c.log.Warn("seat relay: cannot read the outbox's backlog for metrics", slog.Any("error", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(c.rows, prometheus.GaugeValue, float64(rows))
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, oldest.Seconds())
}
