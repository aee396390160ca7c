package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/webhook"
)

// Deliveries returns up to limit deliveries of an endpoint, newest first
// (by Seq): those of the given status ("" for any), with a Seq below
// before (0: from the newest). Errors: webhook.ErrEndpointNotFound,
// ErrUnavailable.
func (s *WebhookEndpoints) Deliveries(ctx context.Context, endpointID uuid.UUID, status string, before int64, limit int) ([]webhook.Delivery, error) {
	if err := s.exists(ctx, endpointID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, event_id, type, status, attempts, last_attempt_at, last_status_code,
			last_error, next_attempt_at, created_at
		FROM webhook_deliveries
		WHERE endpoint_id = $1 AND ($2 = '' OR status = $2) AND ($3 = 0 OR seq < $3)
		ORDER BY seq DESC LIMIT $4`, endpointID, status, before, limit)
	if err != nil {
		return nil, wrap("list webhook deliveries", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Delivery, error) {
		var (
			d              webhook.Delivery
			lastAt, nextAt *time.Time
			lastCode       *int
			lastError      *string
		)
		err := row.Scan(&d.Seq, &d.EventID, &d.Type, &d.Status, &d.Attempts, &lastAt, &lastCode, &lastError, &nextAt, &d.CreatedAt)
		d.LastAttemptAt, d.LastStatusCode, d.LastError, d.NextAttemptAt = orZero(lastAt), orZero(lastCode), orZero(lastError), orZero(nextAt)
		return d, err
	})
	if err != nil {
		return nil, wrap("list webhook deliveries", err)
	}
	return list, nil
}

func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// RetryDelivery makes a delivery of an endpoint pending and due now,
// whatever its status: the worker tries it again at once. Errors:
// webhook.ErrEndpointNotFound, webhook.ErrDeliveryNotFound,
// ErrUnavailable.
func (s *WebhookEndpoints) RetryDelivery(ctx context.Context, endpointID uuid.UUID, eventID string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now()
		WHERE endpoint_id = $1 AND event_id = $2`, endpointID, eventID)
	if err != nil {
		return wrapText("retry webhook delivery", "eventId", err)
	}
	if tag.RowsAffected() == 0 {
		if err := s.exists(ctx, endpointID); err != nil {
			return err
		}
		return webhook.ErrDeliveryNotFound
	}
	return nil
}

// exists returns webhook.ErrEndpointNotFound unless the endpoint exists.
func (s *WebhookEndpoints) exists(ctx context.Context, id uuid.UUID) error {
	var found bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM webhook_endpoints WHERE id = $1)`, id).Scan(&found); err != nil {
		return wrap("read webhook endpoint", err)
	}
	if !found {
		return webhook.ErrEndpointNotFound
	}
	return nil
}
