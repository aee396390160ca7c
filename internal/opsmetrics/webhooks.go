package opsmetrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// Webhooks exports the delivery of webhook events: this instance's
// attempts by outcome and delivery latency (sum them over instances), and
// every endpoint's pending backlog, read from PostgreSQL at each scrape
// (the same on every instance: take the max).
type Webhooks struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
}

// backlogReadTimeout bounds the scrape's read of the backlog.
const backlogReadTimeout = 2 * time.Second

// NewWebhooks registers the webhook metrics on reg, the backlog read from
// log.
func NewWebhooks(reg prometheus.Registerer, log *postgres.WebhookDeliveries) (*Webhooks, error) {
	w := &Webhooks{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "seatlock_webhook_attempts_total",
			Help: "Delivery attempts by their delivery's outcome: succeeded, failed (the last attempt, or 410), pending (to be retried)."},
			[]string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "seatlock_webhook_delivery_seconds",
			Help:    "Time from an event's commit to its delivery's success.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600}}),
	}
	return w, register(reg, w.attempts, w.latency, &webhookBacklog{log: log,
		pending: prometheus.NewDesc("seatlock_webhook_pending", "Deliveries pending, per endpoint.", []string{"endpoint"}, nil),
		oldest: prometheus.NewDesc("seatlock_webhook_oldest_pending_seconds",
			"Age of the oldest pending delivery's event, per endpoint.", []string{"endpoint"}, nil)})
}

// Attempted implements dispatch.Observer.
func (w *Webhooks) Attempted(outcome string, sinceEvent time.Duration) {
	w.attempts.WithLabelValues(outcome).Inc()
	if outcome == dispatch.Succeeded {
		w.latency.Observe(sinceEvent.Seconds())
	}
}

// webhookBacklog reads the backlog when scraped.
type webhookBacklog struct {
	log             *postgres.WebhookDeliveries
	pending, oldest *prometheus.Desc
}

func (b *webhookBacklog) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.pending
	ch <- b.oldest
}

func (b *webhookBacklog) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backlogReadTimeout)
	defer cancel()
	backlog, err := b.log.Backlog(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.pending, err)
		return
	}
	for _, e := range backlog {
		ch <- prometheus.MustNewConstMetric(b.pending, prometheus.GaugeValue, float64(e.Pending), e.Endpoint.String())
		ch <- prometheus.MustNewConstMetric(b.oldest, prometheus.GaugeValue, e.Oldest.Seconds(), e.Endpoint.String())
	}
}
