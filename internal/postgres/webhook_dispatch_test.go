package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// addEndpoint inserts an enabled endpoint subscribed to events (its
// secret is a placeholder: these tests send nothing).
func addEndpoint(t *testing.T, pool *pgxpool.Pool, events ...string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	if err := pool.QueryRow(testContext(t), `
		INSERT INTO webhook_endpoints (url, events, secret) VALUES ('https://example.com/hook', $1, '\x00') RETURNING id`,
		events).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// addEvent writes an event as a change's transaction would, returning its
// seq.
func addEvent(t *testing.T, pool *pgxpool.Pool, typ string, object uuid.UUID) int64 {
	t.Helper()
	var seq int64
	if err := pool.QueryRow(testContext(t), `
		INSERT INTO webhook_events (type, object_id, data) VALUES ($1, $2::uuid, json_build_object('id', $2::uuid::text)) RETURNING seq`,
		typ, object).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// fanOut runs a fan-out that sends nothing: every delivery is written
// pending, due now, for the endpoint's worker. It returns how many events
// it took and the endpoints given deliveries.
func fanOut(t *testing.T, w *postgres.WebhookDeliveries, limit int) (int, []uuid.UUID) {
	t.Helper()
	var endpoints []uuid.UUID
	events, _, err := w.FanOut(testContext(t), 0, limit, func(fresh []dispatch.Fresh) []dispatch.Made {
		var made []dispatch.Made
		for _, f := range fresh {
			for _, ep := range f.Endpoints {
				if !slices.Contains(endpoints, ep) {
					endpoints = append(endpoints, ep)
				}
				made = append(made, dispatch.Made{Endpoint: ep, Attempt: dispatch.Attempt{Seq: f.Seq, Status: dispatch.Pending, NextAt: time.Now()}})
			}
		}
		return made
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, endpoints
}

func seqsOf(due []dispatch.Due) []int64 {
	seqs := make([]int64, len(due))
	for i, d := range due {
		seqs[i] = d.Seq
	}
	return seqs
}

// An event gets a delivery for each enabled endpoint subscribed to its
// type, and none for the others; fanned out once.
func TestFanOutGivesSubscribersDeliveries(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	holds := addEndpoint(t, pool, "hold.created", "hold.confirmed")
	all := addEndpoint(t, pool, "hold.created", "reservation.created")
	off := addEndpoint(t, pool, "hold.created")
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false WHERE id = $1`, off); err != nil {
		t.Fatal(err)
	}
	h, r := uuid.New(), uuid.New()
	addEvent(t, pool, "hold.created", h)
	addEvent(t, pool, "reservation.created", r)

	events, endpoints := fanOut(t, w, 10)
	if events != 2 || len(endpoints) != 2 {
		t.Fatalf("FanOut = %d events, endpoints %v; want 2 events, 2 endpoints", events, endpoints)
	}
	count := func(ep uuid.UUID) (n int) {
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`, ep).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := [3]int{count(holds), count(all), count(off)}; got != [3]int{1, 2, 0} {
		t.Errorf("pending deliveries (holds, all, off) = %v, want [1 2 0]", got)
	}
	if events, _ := fanOut(t, w, 10); events != 0 {
		t.Errorf("second FanOut = %d; want 0 events", events)
	}
}

// An endpoint gets the events that happen once it exists, not those from
// before it that are still to be dispatched.
func TestFanOutGivesAnEndpointNothingFromBeforeIt(t *testing.T) {
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	before := addEvent(t, pool, "hold.created", uuid.New())
	if _, err := pool.Exec(testContext(t), `UPDATE webhook_events SET occurred_at = now() - interval '1 second' WHERE seq = $1`, before); err != nil {
		t.Fatal(err)
	}
	ep := addEndpoint(t, pool, "hold.created")
	after := addEvent(t, pool, "hold.created", uuid.New())
	var given []int64
	if _, _, err := w.FanOut(testContext(t), 0, 10, func(fresh []dispatch.Fresh) []dispatch.Made {
		for _, f := range fresh {
			if slices.Contains(f.Endpoints, ep) {
				given = append(given, f.Seq)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(given, []int64{after}) {
		t.Errorf("the endpoint was given events %v, want only %d (not %d, from before it)", given, after, before)
	}
}

// One object's deliveries go one at a time in event order, however many
// are due; other objects' do not wait. A claimed delivery is leased: it
// is not handed out again until it is recorded or its lease ends.
func TestClaimDueKeepsOrderPerObject(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "hold.created", "hold.confirmed", "reservation.created")
	hold, other := uuid.New(), uuid.New()
	first := addEvent(t, pool, "hold.created", hold)
	second := addEvent(t, pool, "hold.confirmed", hold)
	elsewhere := addEvent(t, pool, "reservation.created", other)
	fanOut(t, w, 10)

	due, err := w.ClaimDue(ctx, ep, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(due); len(got) != 2 || got[0] != first || got[1] != elsewhere {
		t.Fatalf("first claim = %v, want [%d %d] (the hold's second event waits)", got, first, elsewhere)
	}
	if due[0].Type != "hold.created" || due[0].ObjectID != hold || string(due[0].Data) == "" || due[0].EventID == "" {
		t.Errorf("claimed delivery = %+v, want the hold's event with its id and data", due[0])
	}
	if again, err := w.ClaimDue(ctx, ep, 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("claim while leased = %v, %v; want nothing", seqsOf(again), err)
	}

	// The first fails and is due again later: the second still waits.
	now := time.Now()
	if err := w.Record(ctx, ep, []dispatch.Attempt{
		{Seq: first, Status: dispatch.Pending, At: now, StatusCode: 500, Error: "answered 500", NextAt: now.Add(-time.Second)},
		{Seq: elsewhere, Status: dispatch.Succeeded, At: now, StatusCode: 200},
	}); err != nil {
		t.Fatal(err)
	}
	due, err = w.ClaimDue(ctx, ep, 10, time.Minute)
	if err != nil || len(due) != 1 || due[0].Seq != first || due[0].Attempts != 1 {
		t.Fatalf("claim after a failure = %+v, %v; want the first again with 1 attempt", due, err)
	}
	if err := w.Record(ctx, ep, []dispatch.Attempt{{Seq: first, Status: dispatch.Succeeded, At: time.Now(), StatusCode: 204}}); err != nil {
		t.Fatal(err)
	}
	due, err = w.ClaimDue(ctx, ep, 10, time.Minute)
	if err != nil || len(due) != 1 || due[0].Seq != second {
		t.Fatalf("claim after the first succeeded = %v, %v; want [%d]", seqsOf(due), err, second)
	}

	var status string
	var attempts, code int
	if err := pool.QueryRow(ctx, `SELECT status, attempts, last_status_code FROM webhook_deliveries WHERE endpoint_id = $1 AND seq = $2`,
		ep, first).Scan(&status, &attempts, &code); err != nil {
		t.Fatal(err)
	}
	if status != dispatch.Succeeded || attempts != 2 || code != 204 {
		t.Errorf("first delivery = %s after %d attempts, last %d; want succeeded after 2, last 204", status, attempts, code)
	}
}

// A failed delivery no longer holds its object's next one back.
func TestFailedDeliveryLetsTheNextGo(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "hold.created", "hold.released")
	hold := uuid.New()
	first := addEvent(t, pool, "hold.created", hold)
	second := addEvent(t, pool, "hold.released", hold)
	fanOut(t, w, 10)
	if _, err := w.ClaimDue(ctx, ep, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := w.Record(ctx, ep, []dispatch.Attempt{{Seq: first, Status: dispatch.Failed, At: time.Now(), Error: "timed out"}}); err != nil {
		t.Fatal(err)
	}
	due, err := w.ClaimDue(ctx, ep, 10, time.Minute)
	if err != nil || len(due) != 1 || due[0].Seq != second {
		t.Fatalf("claim after a failure = %v, %v; want [%d]", seqsOf(due), err, second)
	}
}

// Workers claiming at once never get the same delivery.
func TestClaimDueHandsEachDeliveryOnce(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "reservation.created")
	const events = 300
	for range events {
		addEvent(t, pool, "reservation.created", uuid.New())
	}
	if n, _ := fanOut(t, w, events); n != events {
		t.Fatalf("FanOut = %d, want %d", n, events)
	}
	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		wg      sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				due, err := w.ClaimDue(ctx, ep, 7, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(due) == 0 {
					return
				}
				mu.Lock()
				for _, d := range due {
					claimed[d.Seq]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimed) != events {
		t.Errorf("%d deliveries claimed, want %d", len(claimed), events)
	}
	for seq, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %d claimed %d times", seq, n)
		}
	}
}

// DueNow brings an endpoint's waiting retries forward, not another's, and
// not a delivery leased just now.
func TestDueNowBringsTheBacklogForward(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep, other := addEndpoint(t, pool, "reservation.created"), addEndpoint(t, pool, "reservation.created")
	for range 3 {
		addEvent(t, pool, "reservation.created", uuid.New())
	}
	fanOut(t, w, 10)
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	leased := int64(0)
	if err := pool.QueryRow(ctx, `
		UPDATE webhook_deliveries SET next_attempt_at = now() + interval '10 seconds'
		WHERE endpoint_id = $1 AND seq = (SELECT min(seq) FROM webhook_deliveries WHERE endpoint_id = $1) RETURNING seq`, ep).Scan(&leased); err != nil {
		t.Fatal(err)
	}
	moved, err := w.DueNow(ctx, ep, 30*time.Second)
	if err != nil || moved != 2 {
		t.Fatalf("DueNow = %d, %v; want 2 (the leased one kept)", moved, err)
	}
	due, err := w.ClaimDue(ctx, ep, 10, time.Minute)
	if err != nil || len(due) != 2 {
		t.Errorf("due after DueNow = %v, %v; want 2", seqsOf(due), err)
	}
	if due, err := w.ClaimDue(ctx, other, 10, time.Minute); err != nil || len(due) != 0 {
		t.Errorf("the other endpoint's due = %v, %v; want none", seqsOf(due), err)
	}
}

// A disabled endpoint gets no more deliveries, and says why.
func TestDisableWebhook(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "reservation.created")
	if err := w.DisableWebhook(ctx, ep, dispatch.GoneReason); err != nil {
		t.Fatal(err)
	}
	var (
		enabled bool
		reason  string
	)
	if err := pool.QueryRow(ctx, `SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = $1`, ep).Scan(&enabled, &reason); err != nil {
		t.Fatal(err)
	}
	if enabled || reason != dispatch.GoneReason {
		t.Errorf("endpoint enabled %v, reason %q; want disabled, %q", enabled, reason, dispatch.GoneReason)
	}
	addEvent(t, pool, "reservation.created", uuid.New())
	if _, endpoints := fanOut(t, w, 10); len(endpoints) != 0 {
		t.Errorf("FanOut to a disabled endpoint = %v; want none", endpoints)
	}
}

// Backlog counts pending deliveries and the age of the oldest; purging
// keeps what is pending or recent.
func TestWebhookBacklogAndPurge(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "reservation.created")
	done, waiting := addEvent(t, pool, "reservation.created", uuid.New()), addEvent(t, pool, "reservation.created", uuid.New())
	// Events of 8 days ago, to an endpoint as old.
	if _, err := pool.Exec(ctx, `UPDATE webhook_events SET occurred_at = now() - interval '8 days'`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_endpoints SET created_at = now() - interval '9 days'`); err != nil {
		t.Fatal(err)
	}
	fanOut(t, w, 10)
	if err := w.Record(ctx, ep, []dispatch.Attempt{{Seq: done, Status: dispatch.Succeeded, At: time.Now(), StatusCode: 200}}); err != nil {
		t.Fatal(err)
	}
	backlog, err := w.Backlog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(backlog) != 1 || backlog[0].Endpoint != ep || backlog[0].Pending != 1 || backlog[0].Oldest < 7*24*time.Hour {
		t.Fatalf("Backlog = %+v, want 1 pending on %v, 8 days old", backlog, ep)
	}
	if _, err := pool.Exec(ctx, `UPDATE webhook_deliveries SET created_at = now() - interval '8 days'`); err != nil {
		t.Fatal(err)
	}
	purged, err := w.PurgeWebhooks(ctx, time.Now().Add(-7*24*time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	if purged != 2 {
		t.Errorf("purged %d rows, want 2: the finished delivery and its event", purged)
	}
	var left []int64
	rows, err := pool.Query(ctx, `SELECT seq FROM webhook_events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		left = append(left, s)
	}
	if len(left) != 1 || left[0] != waiting {
		t.Errorf("events left %v, want [%d] (its delivery is pending)", left, waiting)
	}
}

func testenvPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	_, pool := newStore(t)
	return pool
}

// A fan-out writes what its deliver made: an attempt's outcome with its
// one attempt, or pending for the worker; an object with a delivery
// pending is named held for that endpoint; and while one fan-out runs,
// another takes nothing.
func TestFanOutWritesWhatItMade(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "hold.created", "hold.confirmed")
	sent, refused := uuid.New(), uuid.New()
	sentSeq := addEvent(t, pool, "hold.created", sent)
	refusedSeq := addEvent(t, pool, "hold.created", refused)
	at, retryAt := time.Now().Add(-time.Second).Truncate(time.Microsecond), time.Now().Add(time.Hour).Truncate(time.Microsecond)

	inside, release := make(chan struct{}), make(chan struct{})
	var second int
	var secondCalled bool
	go func() {
		<-inside
		var err error
		second, _, err = w.FanOut(ctx, 0, 10, func([]dispatch.Fresh) []dispatch.Made { secondCalled = true; return nil })
		if err != nil {
			t.Error(err)
		}
		close(release)
	}()
	events, lowest, err := w.FanOut(ctx, 0, 10, func(fresh []dispatch.Fresh) []dispatch.Made {
		close(inside)
		<-release
		if len(fresh) != 2 || !slices.Equal(fresh[0].Endpoints, []uuid.UUID{ep}) || len(fresh[0].Held) != 0 {
			t.Errorf("fresh = %+v, want two events for %s, none held", fresh, ep)
		}
		return []dispatch.Made{
			{Endpoint: ep, Attempted: true, Attempt: dispatch.Attempt{Seq: sentSeq, Status: dispatch.Succeeded, At: at, StatusCode: 204}},
			{Endpoint: ep, Attempted: true, Attempt: dispatch.Attempt{Seq: refusedSeq, Status: dispatch.Pending, At: at, StatusCode: 503, Error: "503 Service Unavailable", NextAt: retryAt}},
		}
	})
	if err != nil || events != 2 || lowest != sentSeq {
		t.Fatalf("FanOut = %d from %d, %v; want 2 from %d", events, lowest, err, sentSeq)
	}
	if second != 0 || secondCalled {
		t.Errorf("a fan-out beside another took %d events (deliver called %v), want none", second, secondCalled)
	}
	type row struct {
		Status   string
		Attempts int
		Last     *time.Time
		Code     *int
		Err      *string
		Next     *time.Time
	}
	read := func(seq int64) (r row) {
		if err := pool.QueryRow(ctx, `SELECT status, attempts, last_attempt_at, last_status_code, last_error, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = $1 AND seq = $2`,
			ep, seq).Scan(&r.Status, &r.Attempts, &r.Last, &r.Code, &r.Err, &r.Next); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := read(sentSeq); r.Status != dispatch.Succeeded || r.Attempts != 1 || r.Last == nil || !r.Last.Equal(at) || r.Code == nil || *r.Code != 204 || r.Err != nil || r.Next != nil {
		t.Errorf("the delivery sent: %+v", r)
	}
	if r := read(refusedSeq); r.Status != dispatch.Pending || r.Attempts != 1 || r.Code == nil || *r.Code != 503 || r.Err == nil || r.Next == nil || !r.Next.Equal(retryAt) {
		t.Errorf("the delivery refused: %+v", r)
	}

	// The refused hold's next event is held behind its pending delivery;
	// the other hold's is not. A look from a seq takes nothing before it.
	addEvent(t, pool, "hold.created", uuid.New())
	heldSeq := addEvent(t, pool, "hold.confirmed", refused)
	addEvent(t, pool, "hold.confirmed", sent)
	if _, _, err := w.FanOut(ctx, heldSeq, 10, func(fresh []dispatch.Fresh) []dispatch.Made {
		if len(fresh) != 2 || !slices.Equal(fresh[0].Held, []uuid.UUID{ep}) || len(fresh[1].Held) != 0 {
			t.Errorf("held: %+v, want the refused hold's event held for %s, the other not", fresh, ep)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A fan-out whose transaction does not commit leaves its events to be
// taken again, and writes none of its deliveries.
func TestFanOutThatFailsLeavesTheEvents(t *testing.T) {
	ctx := testContext(t)
	pool := testenvPool(t)
	w := postgres.NewWebhookDeliveries(pool)
	ep := addEndpoint(t, pool, "hold.created")
	seq := addEvent(t, pool, "hold.created", uuid.New())
	cut, cancel := context.WithCancel(ctx)
	if _, _, err := w.FanOut(cut, 0, 10, func([]dispatch.Fresh) []dispatch.Made {
		cancel() // the instance stops before writing
		return []dispatch.Made{{Endpoint: ep, Attempted: true, Attempt: dispatch.Attempt{Seq: seq, Status: dispatch.Succeeded, At: time.Now()}}}
	}); err == nil {
		t.Fatal("a fan-out cut short returned no error")
	}
	var deliveries int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, ep).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 {
		t.Errorf("%d deliveries written by a fan-out that did not commit", deliveries)
	}
	// The cut fan-out's transaction ends once its server process has seen
	// the connection close; until then it holds the fan-out's lock, and
	// another fan-out takes nothing.
	events, _ := fanOut(t, w, 10)
	for deadline := time.Now().Add(10 * time.Second); events == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		events, _ = fanOut(t, w, 10)
	}
	if events != 1 {
		t.Errorf("the event taken again: %d events, want 1", events)
	}
}
