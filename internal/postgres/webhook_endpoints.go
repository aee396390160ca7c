package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/webhook"
)

// WebhookEndpoint is an endpoint as WebhookEndpoints stores it.
type WebhookEndpoint = webhook.Endpoint

// WebhookEndpoints stores webhook endpoints (webhook_endpoints) and reads
// their delivery log (webhook_deliveries). Secrets are sealed with its
// Sealer before they are written and opened only by Active: what it gives
// the API never holds one.
type WebhookEndpoints struct {
	pool   retryPool
	sealer *webhook.Sealer
}

// NewWebhookEndpoints returns the store on pool (migrated), sealing
// secrets with sealer.
func NewWebhookEndpoints(pool *pgxpool.Pool, sealer *webhook.Sealer) *WebhookEndpoints {
	return &WebhookEndpoints{pool: newRetryPool(pool), sealer: sealer}
}

// endpointColumns are what scanEndpoint reads, in its order.
const endpointColumns = `id, url, events, description, enabled, disabled_reason, created_at, updated_at`

func scanEndpoint(row pgx.Row) (webhook.Endpoint, error) {
	var (
		e      webhook.Endpoint
		reason *string
	)
	err := row.Scan(&e.ID, &e.URL, &e.Events, &e.Description, &e.Enabled, &reason, &e.CreatedAt, &e.UpdatedAt)
	if reason != nil {
		e.DisabledReason = *reason
	}
	return e, err
}

// Create stores a new, enabled endpoint of e's URL, Events and
// Description, whose secret is secret (sealed). Errors: ErrUnavailable.
//
// Its CreatedAt is read from the clock once the insert has committed, in
// a second statement: a change gets its events written only while its
// statement sees an endpoint subscribed (subscribed), and every change
// that begins at or after CreatedAt, which the endpoint is given, began
// after the endpoint was visible. An error of that second statement
// leaves the endpoint made with the insert's time instead, a change
// begun in the moment of the commit perhaps without its event.
func (s *WebhookEndpoints) Create(ctx context.Context, e webhook.Endpoint, secret webhook.Secret) (webhook.Endpoint, error) {
	var id uuid.UUID
	err := s.pool.QueryRow(ctx, `INSERT INTO webhook_endpoints (url, events, description, secret)
		VALUES ($1, $2, $3, $4) RETURNING id`, e.URL, e.Events, e.Description, s.sealer.Seal(secret)).Scan(&id)
	if err != nil {
		return webhook.Endpoint{}, wrapText("create webhook endpoint", "description", err)
	}
	created, err := scanEndpoint(s.pool.QueryRow(ctx, `UPDATE webhook_endpoints
		SET created_at = clock_timestamp(), updated_at = clock_timestamp()
		WHERE id = $1 RETURNING `+endpointColumns, id))
	if err != nil {
		return webhook.Endpoint{}, wrap("create webhook endpoint", err)
	}
	return created, nil
}

// Endpoint returns one endpoint, without its secrets. Errors:
// webhook.ErrEndpointNotFound, ErrUnavailable.
func (s *WebhookEndpoints) Endpoint(ctx context.Context, id uuid.UUID) (webhook.Endpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1`, id))
	return oneRow(e, err, webhook.ErrEndpointNotFound, "read webhook endpoint")
}

// Endpoints returns up to limit endpoints, newest first, without their
// secrets: those after the endpoint after (by CreatedAt, then ID), or
// from the newest when after's ID is uuid.Nil. Errors: ErrUnavailable.
func (s *WebhookEndpoints) Endpoints(ctx context.Context, after webhook.Endpoint, limit int) ([]webhook.Endpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE $1::uuid IS NULL OR (created_at, id) < ($2, $1)
		ORDER BY created_at DESC, id DESC LIMIT $3`, nullUUID(after.ID), after.CreatedAt, limit)
	if err != nil {
		return nil, wrap("list webhook endpoints", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Endpoint, error) { return scanEndpoint(row) })
	if err != nil {
		return nil, wrap("list webhook endpoints", err)
	}
	return list, nil
}

func nullUUID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// Update applies change to an endpoint and returns it. Enabling it clears
// its DisabledReason; disabling it keeps the reason the service gave, if
// any. Errors: webhook.ErrEndpointNotFound, ErrUnavailable.
func (s *WebhookEndpoints) Update(ctx context.Context, id uuid.UUID, change webhook.EndpointChange) (webhook.Endpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `UPDATE webhook_endpoints SET
			url = coalesce($2, url),
			events = coalesce($3, events),
			description = coalesce($4, description),
			enabled = coalesce($5, enabled),
			disabled_reason = CASE WHEN $5::boolean THEN NULL ELSE disabled_reason END,
			updated_at = now()
		WHERE id = $1 RETURNING `+endpointColumns,
		id, change.URL, change.Events, change.Description, change.Enabled))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return webhook.Endpoint{}, webhook.ErrEndpointNotFound
	case err != nil:
		return webhook.Endpoint{}, wrapText("update webhook endpoint", "description", err)
	}
	return e, nil
}

// Delete removes an endpoint and its delivery log. Errors:
// webhook.ErrEndpointNotFound, ErrUnavailable.
func (s *WebhookEndpoints) Delete(ctx context.Context, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
	switch {
	case err != nil:
		return wrap("delete webhook endpoint", err)
	case tag.RowsAffected() == 0:
		return webhook.ErrEndpointNotFound
	}
	return nil
}

// RotateSecret makes secret an endpoint's secret; the one it replaces
// stays valid for grace (webhook.SecretGrace), and replaces the previous
// one if a rotation made one already. Errors: webhook.ErrEndpointNotFound,
// ErrUnavailable.
func (s *WebhookEndpoints) RotateSecret(ctx context.Context, id uuid.UUID, secret webhook.Secret, grace time.Duration) error {
	tag, err := s.pool.Exec(ctx, `UPDATE webhook_endpoints SET previous_secret = secret,
			previous_secret_until = now() + make_interval(secs => $3), secret = $2, updated_at = now()
		WHERE id = $1`, id, s.sealer.Seal(secret), grace.Seconds())
	switch {
	case err != nil:
		return wrap("rotate webhook secret", err)
	case tag.RowsAffected() == 0:
		return webhook.ErrEndpointNotFound
	}
	return nil
}

// Active returns every enabled endpoint with its secrets opened: the
// current one, then the previous one while it is valid. An endpoint whose
// secrets do not open (sealed under another AUTH_SECRET) is left out, and
// the error, wrapping webhook.ErrUnseal and naming it, comes with the
// others; otherwise errors are ErrUnavailable.
func (s *WebhookEndpoints) Active(ctx context.Context) ([]webhook.Endpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+`, secret,
			CASE WHEN previous_secret_until > now() THEN previous_secret END
		FROM webhook_endpoints WHERE enabled ORDER BY created_at, id`)
	if err != nil {
		return nil, wrap("read active webhook endpoints", err)
	}
	defer rows.Close()
	var (
		active    []webhook.Endpoint
		unopened  []error
		reason    *string
		cur, prev []byte
	)
	for rows.Next() {
		var e webhook.Endpoint
		if err := rows.Scan(&e.ID, &e.URL, &e.Events, &e.Description, &e.Enabled, &reason, &e.CreatedAt, &e.UpdatedAt, &cur, &prev); err != nil {
			return nil, wrap("read active webhook endpoints", err)
		}
		if reason != nil {
			e.DisabledReason = *reason
		}
		if e.Secrets, err = s.open(cur, prev); err != nil {
			unopened = append(unopened, fmt.Errorf("postgres: webhook endpoint %s: %w", e.ID, err))
			continue
		}
		active = append(active, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("read active webhook endpoints", err)
	}
	return active, errors.Join(unopened...)
}

// open opens the current secret and, when there is one, the previous.
func (s *WebhookEndpoints) open(cur, prev []byte) ([]webhook.Secret, error) {
	secret, err := s.sealer.Open(cur)
	if err != nil {
		return nil, err
	}
	secrets := []webhook.Secret{secret}
	if prev != nil {
		previous, err := s.sealer.Open(prev)
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, previous)
	}
	return secrets, nil
}
