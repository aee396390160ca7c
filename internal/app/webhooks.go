package app

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/webhook"
)

// openWebhooks returns the store of webhook endpoints, whose secrets are
// sealed under a key derived from AUTH_SECRET.
func openWebhooks(cfg config.Config, pool *pgxpool.Pool) (*postgres.WebhookEndpoints, error) {
	sealer, err := webhook.NewSealer(cfg.AuthSecret)
	if err != nil {
		return nil, err
	}
	return postgres.NewWebhookEndpoints(pool, sealer), nil
}
