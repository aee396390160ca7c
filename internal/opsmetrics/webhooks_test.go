package opsmetrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/opsmetrics"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// The tests' PostgreSQL: TEST_DATABASE_URL's, or a server of this test
// binary's own.
func TestMain(m *testing.M) { lockenv.Run(m) }

// Attempts are counted by outcome, successes' latency observed, and the
// backlog read per endpoint at the scrape.
func TestWebhookMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool := testenv.Pool(t)
	reg := prometheus.NewRegistry()
	m, err := opsmetrics.NewWebhooks(reg, postgres.NewWebhookDeliveries(pool))
	if err != nil {
		t.Fatal(err)
	}
	m.Attempted(dispatch.Succeeded, 300*time.Millisecond)
	m.Attempted(dispatch.Succeeded, 2*time.Second)
	m.Attempted(dispatch.Pending, 0)

	var endpoint string
	if err := pool.QueryRow(ctx, `INSERT INTO webhook_endpoints (url, events, secret, created_at) VALUES ('https://example.com', '{reservation.created}', '\x00', now() - interval '1 hour') RETURNING id::text`).Scan(&endpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO webhook_events (type, object_id, data, occurred_at) VALUES ('reservation.created', gen_random_uuid(), '{}', now() - interval '90 seconds')`); err != nil {
		t.Fatal(err)
	}
	// A fan-out that sends nothing: the delivery is left pending.
	leave := func(fresh []dispatch.Fresh) []dispatch.Made {
		return []dispatch.Made{{Endpoint: fresh[0].Endpoints[0], Attempt: dispatch.Attempt{Seq: fresh[0].Seq, Status: dispatch.Pending, NextAt: time.Now()}}}
	}
	if _, _, err := postgres.NewWebhookDeliveries(pool).FanOut(ctx, 0, 10, leave); err != nil {
		t.Fatal(err)
	}

	want := `
# HELP seatlock_webhook_attempts_total Delivery attempts by their delivery's outcome: succeeded, failed (the last attempt, or 410), pending (to be retried).
# TYPE seatlock_webhook_attempts_total counter
seatlock_webhook_attempts_total{outcome="pending"} 1
seatlock_webhook_attempts_total{outcome="succeeded"} 2
# HELP seatlock_webhook_pending Deliveries pending, per endpoint.
# TYPE seatlock_webhook_pending gauge
seatlock_webhook_pending{endpoint="` + endpoint + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "seatlock_webhook_attempts_total", "seatlock_webhook_pending"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "seatlock_webhook_delivery_seconds"); n != 1 {
		t.Errorf("latency histogram: %d series, want 1", n)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "seatlock_webhook_delivery_seconds":
			if c := f.GetMetric()[0].GetHistogram().GetSampleCount(); c != 2 {
				t.Errorf("latency observations = %d, want 2 (successes only)", c)
			}
		case "seatlock_webhook_oldest_pending_seconds":
			if age := f.GetMetric()[0].GetGauge().GetValue(); age < 85 || age > 150 {
				t.Errorf("oldest pending = %.0f s, want about 90", age)
			}
		}
	}
}
