package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// WebhookDeliveries moves webhook events to their endpoints' delivery
// log and hands the delivery worker what is due, for any number of
// instances at once: every step claims its rows (SKIP LOCKED, or a lease
// on next_attempt_at), and order per object is kept by never handing out
// a delivery while an earlier one of its object to the same endpoint is
// pending.
type WebhookDeliveries struct {
	pool retryPool
}

// NewWebhookDeliveries returns the delivery log on pool.
func NewWebhookDeliveries(pool *pgxpool.Pool) *WebhookDeliveries {
	return &WebhookDeliveries{pool: newRetryPool(pool)}
}

// fanOutLock serialises fan-outs across instances (a transaction-scoped
// advisory lock, in the two-key form clear of the lock port's): one
// object's events then reach each endpoint in order whichever instance
// takes them. The key is arbitrary and stable.
const fanOutLock = `SELECT pg_try_advisory_xact_lock(hashtext('webhook'), hashtext('fan-out'))`

// takeFresh reads up to $1 undispatched events from seq $2 on, oldest
// first, each with the enabled endpoints subscribed to its type that
// existed when it happened (an endpoint gets what happens once it is
// made, not a backlog from before), and of those the ones holding an
// earlier delivery of its object pending (it must wait behind it).
const takeFresh = `
SELECT ev.seq, ev.id, ev.type, ev.object_id, ev.occurred_at, ev.data, s.endpoints, s.held
FROM (SELECT * FROM webhook_events WHERE NOT dispatched AND seq >= $2 ORDER BY seq LIMIT $1) ev,
LATERAL (
	SELECT coalesce(array_agg(e.id), '{}') AS endpoints,
		coalesce(array_agg(e.id) FILTER (WHERE EXISTS (
			SELECT 1 FROM webhook_deliveries p
			WHERE p.endpoint_id = e.id AND p.object_id = ev.object_id AND p.status = 'pending')), '{}') AS held
	FROM webhook_endpoints e WHERE e.enabled AND ev.type = ANY (e.events) AND e.created_at <= ev.occurred_at
) s
ORDER BY ev.seq`

// writeMade inserts the deliveries of a fan-out (one row of the arrays
// each: its endpoint, event, status, attempts so far and the last one's
// outcome) and marks the events $9 dispatched (a data-modifying WITH
// runs whole whether or not it is read). A delivery to an endpoint deleted
// meanwhile is left out.
const writeMade = `
WITH made AS (
	INSERT INTO webhook_deliveries (endpoint_id, seq, event_id, type, object_id, status, attempts,
		last_attempt_at, last_status_code, last_error, next_attempt_at)
	SELECT m.endpoint_id, m.seq, ev.id, ev.type, ev.object_id, m.status, m.attempts,
		m.at, nullif(m.code, 0), nullif(m.err, ''), CASE WHEN m.status = 'pending' THEN m.next_at END
	FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::int[], $5::timestamptz[], $6::int[], $7::text[], $8::timestamptz[])
		AS m(endpoint_id, seq, status, attempts, at, code, err, next_at)
	JOIN webhook_events ev ON ev.seq = m.seq
	JOIN webhook_endpoints e ON e.id = m.endpoint_id
	ON CONFLICT DO NOTHING
	RETURNING 1
)
UPDATE webhook_events SET dispatched = true WHERE seq = ANY ($9)`

// FanOut takes up to limit undispatched events from seq from on, oldest
// first, and hands them to deliver with the endpoints each must reach; it
// writes the deliveries deliver returns and marks the events dispatched,
// all in one transaction held while deliver runs, so that an event is
// either still undispatched (an instance stopped mid-way: it is taken
// again) or has every delivery it should. One instance fans out at a time: when
// another is, FanOut returns 0 at once. It returns how many events it
// took and the lowest seq among them.
//
// from spares the scan the events dispatched since autovacuum last
// visited: each is still in the undispatched index, dead, until then, and
// a busy minute leaves hundreds of thousands to step over at every pass.
func (w *WebhookDeliveries) FanOut(ctx context.Context, from int64, limit int, deliver func([]dispatch.Fresh) []dispatch.Made) (events int, lowest int64, err error) {
	// Not retried as the other statements are: deliver has sent what it
	// returned, and a second run would send it again.
	err = pgx.BeginFunc(ctx, w.pool.Pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, fanOutLock).Scan(&mine); err != nil || !mine {
			return err
		}
		rows, err := tx.Query(ctx, takeFresh, limit, from)
		if err != nil {
			return err
		}
		fresh, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (dispatch.Fresh, error) {
			var f dispatch.Fresh
			var data []byte
			err := row.Scan(&f.Seq, &f.EventID, &f.Type, &f.ObjectID, &f.OccurredAt, &data, &f.Endpoints, &f.Held)
			f.Data = data
			return f, err
		})
		if err != nil || len(fresh) == 0 {
			return err
		}
		made := deliver(fresh)
		n := len(made)
		cols := newAttemptColumns(n)
		eps, attempts, ats := make([]uuid.UUID, n), make([]int32, n), make([]*time.Time, n)
		for i, m := range made {
			cols.set(i, m.Attempt)
			eps[i] = m.Endpoint
			if m.Attempted {
				attempts[i], ats[i] = 1, &made[i].At
			}
		}
		dispatched := make([]int64, len(fresh))
		for i, f := range fresh {
			dispatched[i] = f.Seq
		}
		if _, err := tx.Exec(ctx, writeMade, eps, cols.seqs, cols.statuses, attempts, ats, cols.codes, cols.errs, cols.nexts, dispatched); err != nil {
			return err
		}
		events, lowest = len(fresh), fresh[0].Seq
		return nil
	})
	if err != nil {
		return 0, 0, wrap("fan out webhook events", err)
	}
	return events, lowest, nil
}

// claimDue leases up to $2 of endpoint $1's pending deliveries that are
// due and first of their object (no earlier pending delivery of the same
// object to the same endpoint), oldest event first, by moving their
// next_attempt_at $3 ms ahead: another worker passes them over until the
// lease ends, and the object's later deliveries wait behind them.
const claimDue = `
WITH due AS (
	SELECT d.seq FROM webhook_deliveries d
	WHERE d.endpoint_id = $1 AND d.status = 'pending' AND d.next_attempt_at <= now()
	  AND NOT EXISTS (
		SELECT 1 FROM webhook_deliveries p
		WHERE p.endpoint_id = d.endpoint_id AND p.object_id = d.object_id AND p.status = 'pending' AND p.seq < d.seq)
	ORDER BY d.seq
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), leased AS (
	UPDATE webhook_deliveries d SET next_attempt_at = now() + $3 * interval '1 millisecond'
	FROM due WHERE d.endpoint_id = $1 AND d.seq = due.seq
	RETURNING d.seq, d.attempts
)
SELECT l.seq, e.id, e.type, e.object_id, e.occurred_at, e.data, l.attempts
FROM leased l JOIN webhook_events e ON e.seq = l.seq
ORDER BY l.seq`

// ClaimDue leases up to limit of endpoint's due deliveries for lease (at
// most one of each object), oldest first.
func (w *WebhookDeliveries) ClaimDue(ctx context.Context, endpoint uuid.UUID, limit int, lease time.Duration) ([]dispatch.Due, error) {
	rows, err := w.pool.Query(ctx, claimDue, endpoint, limit, lease.Milliseconds())
	if err != nil {
		return nil, wrap("claim webhook deliveries", err)
	}
	due, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (dispatch.Due, error) {
		var d dispatch.Due
		var data []byte
		err := row.Scan(&d.Seq, &d.EventID, &d.Type, &d.ObjectID, &d.OccurredAt, &data, &d.Attempts)
		d.Data = data
		return d, err
	})
	if err != nil {
		return nil, wrap("claim webhook deliveries", err)
	}
	return due, nil
}

// recordAttempts writes attempts of endpoint $1's deliveries, one row of
// the arrays each.
const recordAttempts = `
UPDATE webhook_deliveries d SET
	status = a.status, attempts = d.attempts + 1, last_attempt_at = a.at,
	last_status_code = nullif(a.code, 0), last_error = nullif(a.err, ''),
	next_attempt_at = CASE WHEN a.status = 'pending' THEN a.next_at END
FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[])
	AS a(seq, status, at, code, err, next_at)
WHERE d.endpoint_id = $1 AND d.seq = a.seq AND d.status = 'pending'`

// Record writes the outcomes of endpoint's attempts in one statement.
// A delivery no longer pending (retried by an admin meanwhile, say) is
// left as it is.
func (w *WebhookDeliveries) Record(ctx context.Context, endpoint uuid.UUID, attempts []dispatch.Attempt) error {
	if len(attempts) == 0 {
		return nil
	}
	cols, ats := newAttemptColumns(len(attempts)), make([]time.Time, len(attempts))
	for i, a := range attempts {
		cols.set(i, a)
		ats[i] = a.At
	}
	if _, err := w.pool.Exec(ctx, recordAttempts, endpoint, cols.seqs, cols.statuses, ats, cols.codes, cols.errs, cols.nexts); err != nil {
		return wrap("record webhook attempts", err)
	}
	return nil
}

// attemptColumns are attempts' outcomes laid out as the statements'
// arrays take them, one element per attempt.
type attemptColumns struct {
	seqs     []int64
	statuses []string
	codes    []int32
	errs     []string
	nexts    []time.Time
}

func newAttemptColumns(n int) attemptColumns {
	return attemptColumns{seqs: make([]int64, n), statuses: make([]string, n), codes: make([]int32, n),
		errs: make([]string, n), nexts: make([]time.Time, n)}
}

func (c attemptColumns) set(i int, a dispatch.Attempt) {
	c.seqs[i], c.statuses[i], c.codes[i], c.errs[i], c.nexts[i] = a.Seq, a.Status, int32(a.StatusCode), a.Error, a.NextAt
}

// DueNow brings every pending delivery of endpoint forward to now: the
// endpoint answered again after failing, and its backlog need not wait
// for the retry schedule. Deliveries leased at this moment keep their
// lease. It returns how many it moved.
func (w *WebhookDeliveries) DueNow(ctx context.Context, endpoint uuid.UUID, leased time.Duration) (int64, error) {
	tag, err := w.pool.Exec(ctx, `
		UPDATE webhook_deliveries SET next_attempt_at = now()
		WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at > now() + $2 * interval '1 millisecond'`,
		endpoint, leased.Milliseconds())
	if err != nil {
		return 0, wrap("bring webhook deliveries forward", err)
	}
	return tag.RowsAffected(), nil
}

// DisableWebhook turns endpoint off for reason (its URL answered 410
// Gone): no delivery is made to it from then on, until an admin enables
// it again.
func (w *WebhookDeliveries) DisableWebhook(ctx context.Context, endpoint uuid.UUID, reason string) error {
	if _, err := w.pool.Exec(ctx, `
		UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1`,
		endpoint, reason); err != nil {
		return wrap("disable webhook endpoint", err)
	}
	return nil
}

// WebhookBacklog is an endpoint's pending deliveries: how many, and how
// long the oldest has waited since its event.
type WebhookBacklog struct {
	Endpoint uuid.UUID
	Pending  int64
	Oldest   time.Duration
}

// Backlog returns every endpoint's pending deliveries (endpoints with none
// are left out).
func (w *WebhookDeliveries) Backlog(ctx context.Context) ([]WebhookBacklog, error) {
	rows, err := w.pool.Query(ctx, `
		SELECT d.endpoint_id, count(*), extract(epoch FROM now() - min(e.occurred_at))
		FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.seq
		WHERE d.status = 'pending'
		GROUP BY d.endpoint_id`)
	if err != nil {
		return nil, wrap("webhook backlog", err)
	}
	backlog, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (WebhookBacklog, error) {
		var (
			b   WebhookBacklog
			age float64
		)
		err := row.Scan(&b.Endpoint, &b.Pending, &age)
		b.Oldest = time.Duration(age * float64(time.Second))
		return b, err
	})
	if err != nil {
		return nil, wrap("webhook backlog", err)
	}
	return backlog, nil
}

// PurgeWebhooks deletes up to limit deliveries finished (succeeded or
// failed) before before, and as many dispatched events that no pending
// delivery needs: WEBHOOK_RETENTION's clean-up. It returns how many rows
// it deleted.
func (w *WebhookDeliveries) PurgeWebhooks(ctx context.Context, before time.Time, limit int) (int64, error) {
	var n int64
	err := w.pool.QueryRow(ctx, `
		WITH gone_deliveries AS (
			DELETE FROM webhook_deliveries WHERE (endpoint_id, seq) IN (
				SELECT endpoint_id, seq FROM webhook_deliveries
				WHERE created_at < $1 AND status <> 'pending' LIMIT $2)
			RETURNING 1
		), gone_events AS (
			DELETE FROM webhook_events WHERE seq IN (
				SELECT e.seq FROM webhook_events e
				WHERE e.occurred_at < $1 AND e.dispatched
				  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.seq = e.seq AND d.status = 'pending')
				LIMIT $2)
			RETURNING 1
		)
		SELECT (SELECT count(*) FROM gone_deliveries) + (SELECT count(*) FROM gone_events)`, before, limit).Scan(&n)
	if err != nil {
		return 0, wrap("purge webhooks", err)
	}
	return n, nil
}

var _ dispatch.Store = (*WebhookDeliveries)(nil)
