package app

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/opsmetrics"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/webhook"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// webhookConns is the size of the delivery worker's own pool: the
// fan-out, the endpoints' claims and records, and one spare. Deliveries
// held up by a slow PostgreSQL never take a connection a request needs.
// Its connections plan by index whatever the statistics say
// (postgres.WithIndexPlans): the delivery log grows from nothing in
// seconds during an on-sale, and a claim planned while it looked empty
// (a prepared statement's plan, kept) read it whole for every pending
// delivery, minutes a claim at 30,000 deliveries.
const webhookConns = 4

// webhookLeaseSlack is how much longer than an attempt's timeout a
// claimed delivery is kept from other instances.
const webhookLeaseSlack = 5 * time.Second

// openDispatcher builds the delivery of webhook events (run by Serve
// beside the relay, on every instance: the delivery log hands each
// delivery to one of them at a time) and registers its metrics.
func (a *App) openDispatcher(ctx context.Context, cfg config.Config, endpoints dispatch.Endpoints, registry prometheus.Registerer, logger *slog.Logger) error {
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.WithMaxConns(webhookConns), postgres.WithIndexPlans())
	if err != nil {
		return err
	}
	a.closeLast(pool.Close)
	deliveries := postgres.NewWebhookDeliveries(pool)
	metrics, err := opsmetrics.NewWebhooks(registry, deliveries)
	if err != nil {
		return err
	}
	wcfg := cfg.Webhook()
	sender := webhook.NewSender(wcfg)
	a.closeFirst(sender.Close)
	a.webhooks = dispatch.New(dispatch.Config{Schedule: wcfg.Schedule, Lease: cmp.Or(wcfg.Timeout, webhook.DefaultTimeout) + webhookLeaseSlack},
		deliveries, endpoints, sender, metrics, logger)
	return nil
}

// runDispatcher runs the delivery of webhook events until ctx ends; the
// channel is closed when it has stopped (at once when there are no jobs on
// this instance).
func (a *App) runDispatcher(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if a.webhooks == nil || a.noJobs {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := a.webhooks.Run(ctx); err != nil {
			a.log.Error("webhooks: the delivery stopped", "err", err)
		}
	}()
	return done
}
