package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/idempotency"
)

// IdempotencyStore implements idempotency.Store in the idempotency_keys
// table.
type IdempotencyStore struct {
	pool retryPool
}

var _ idempotency.Store = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns a store on pool; the schema must be migrated.
func NewIdempotencyStore(pool *pgxpool.Pool) *IdempotencyStore {
	return &IdempotencyStore{pool: newRetryPool(pool)}
}

// claimKey inserts a key, or takes over a row that expired (with a new
// claim), or one whose request ended without an answer (released, or past
// locked_until) with the same fingerprint: that one keeps its claim, under
// which the request's work may have committed. It returns a row only when
// this request now owns the key, with the claim it owns and whether that
// claim was resumed.
const claimKey = `
INSERT INTO idempotency_keys (user_id, key, fingerprint, claim, locked_until, expires_at)
VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond', now() + $6 * interval '1 millisecond')
ON CONFLICT (user_id, key) DO UPDATE
	SET fingerprint = EXCLUDED.fingerprint,
		claim = CASE WHEN idempotency_keys.expires_at <= now() THEN EXCLUDED.claim ELSE idempotency_keys.claim END,
		status = NULL, header = NULL, body = NULL,
		admitted = idempotency_keys.admitted AND idempotency_keys.expires_at > now(),
		created_at = CASE WHEN idempotency_keys.expires_at <= now() THEN now() ELSE idempotency_keys.created_at END,
		locked_until = EXCLUDED.locked_until,
		expires_at = CASE WHEN idempotency_keys.expires_at <= now() THEN EXCLUDED.expires_at ELSE idempotency_keys.expires_at END
	WHERE idempotency_keys.expires_at <= now()
		OR (idempotency_keys.status IS NULL AND idempotency_keys.locked_until <= now()
			AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
RETURNING claim, claim <> $4, admitted`

// beginAttempts bounds Begin's loop: a key that is neither claimable nor
// readable was deleted (abandoned or purged) between the two statements,
// and the next attempt claims it.
const beginAttempts = 3

// Begin implements idempotency.Store.
func (s *IdempotencyStore) Begin(ctx context.Context, k idempotency.Key, fingerprint []byte, runningFor time.Duration) (idempotency.Claim, *idempotency.Response, error) {
	for range beginAttempts {
		claim := idempotency.Claim{Key: k}
		id := uuid.New()
		err := s.pool.QueryRow(ctx, claimKey, k.UserID, k.Key, fingerprint, id,
			runningFor.Milliseconds(), idempotency.Retention.Milliseconds()).Scan(&claim.ID, &claim.Resumed, &claim.Admitted)
		if err == nil {
			return claim, nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			if settled, ok := s.settleClaim(ctx, k, id, err); ok {
				return settled, nil, nil
			}
			return idempotency.Claim{}, nil, wrap("claim idempotency key", err)
		}
		var (
			stored []byte
			status *int
			header []byte
			body   []byte
		)
		err = s.pool.QueryRow(ctx,
			`SELECT fingerprint, status, header, body FROM idempotency_keys WHERE user_id = $1 AND key = $2`,
			k.UserID, k.Key).Scan(&stored, &status, &header, &body)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			continue
		case err != nil:
			return idempotency.Claim{}, nil, wrap("read idempotency key", err)
		case string(stored) != string(fingerprint):
			return idempotency.Claim{}, nil, idempotency.ErrKeyReused
		case status == nil:
			return idempotency.Claim{}, nil, idempotency.ErrKeyInUse
		}
		resp := &idempotency.Response{Status: *status, Header: http.Header{}, Body: body}
		if len(header) > 0 {
			if err := json.Unmarshal(header, &resp.Header); err != nil {
				return idempotency.Claim{}, nil, wrap("decode stored header", err)
			}
		}
		return idempotency.Claim{}, resp, nil
	}
	return idempotency.Claim{}, nil, idempotency.ErrKeyInUse
}

// claimLookupTimeout bounds the look-up that settles a claim whose outcome
// is unknown: long enough for a switchover's new primary (the pool waits
// for one), short next to the request's own timeout.
const claimLookupTimeout = 5 * time.Second

// settleClaim looks up a key whose claim statement failed with its outcome
// unknown (the connection ended while it ran: a primary shut down while
// the commit waited for its synchronous standby commits locally, then
// closes the connection without a word). The key unsettled under id means
// the statement committed: the claim is ours, fresh (a claim taken over
// keeps the old id, and is left to the error). An error the server
// reported means nothing committed.
func (s *IdempotencyStore) settleClaim(ctx context.Context, k idempotency.Key, id uuid.UUID, claimErr error) (idempotency.Claim, bool) {
	if _, reported := errors.AsType[*pgconn.PgError](claimErr); reported || s.pool.notExecuted(claimErr) {
		return idempotency.Claim{}, false
	}
	lookup, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimLookupTimeout)
	defer cancel()
	var stored uuid.UUID
	err := s.pool.QueryRow(lookup,
		`SELECT claim FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND status IS NULL`,
		k.UserID, k.Key).Scan(&stored)
	if err != nil || stored != id {
		return idempotency.Claim{}, false
	}
	return idempotency.Claim{Key: k, ID: id}, true
}

// Finish implements idempotency.Store. A claim taken over meanwhile (its
// request outlived locked_until) stores nothing.
func (s *IdempotencyStore) Finish(ctx context.Context, c idempotency.Claim, resp idempotency.Response) error {
	header, err := json.Marshal(resp.Header)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx,
		`UPDATE idempotency_keys SET status = $4, header = $5, body = $6 WHERE user_id = $1 AND key = $2 AND claim = $3`,
		c.UserID, c.Key.Key, c.ID, resp.Status, header, resp.Body)
	if err != nil {
		return wrap("store idempotent answer", err)
	}
	return nil
}

// Release implements idempotency.Store: the key stays unsettled, with its
// claim, and is claimable at once.
func (s *IdempotencyStore) Release(ctx context.Context, c idempotency.Claim) error {
	_, err := s.pool.Exec(ctx,
		`UPDATE idempotency_keys SET locked_until = now() WHERE user_id = $1 AND key = $2 AND claim = $3 AND status IS NULL`,
		c.UserID, c.Key.Key, c.ID)
	if err != nil {
		return wrap("release idempotency key", err)
	}
	return nil
}

// Admit implements idempotency.Store.
func (s *IdempotencyStore) Admit(ctx context.Context, c idempotency.Claim) error {
	_, err := s.pool.Exec(ctx,
		`UPDATE idempotency_keys SET admitted = true WHERE user_id = $1 AND key = $2 AND claim = $3 AND status IS NULL`,
		c.UserID, c.Key.Key, c.ID)
	if err != nil {
		return wrap("record an idempotency key's admission", err)
	}
	return nil
}

// Abandon implements idempotency.Store.
func (s *IdempotencyStore) Abandon(ctx context.Context, c idempotency.Claim) error {
	_, err := s.pool.Exec(ctx,
		`DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2 AND claim = $3`, c.UserID, c.Key.Key, c.ID)
	if err != nil {
		return wrap("abandon idempotency key", err)
	}
	return nil
}

// Purge implements idempotency.Store.
func (s *IdempotencyStore) Purge(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= now()`)
	if err != nil {
		return 0, wrap("purge idempotency keys", err)
	}
	return tag.RowsAffected(), nil
}
