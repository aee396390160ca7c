package dispatch_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/testenv"
	"github.com/seatlock/seatlock/internal/webhook"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// The tests' PostgreSQL: TEST_DATABASE_URL's, or a server of this test
// binary's own.
func TestMain(m *testing.M) { lockenv.Run(m) }

// receiver is an endpoint's server: it checks each message's signature,
// keeps what it took in arrival order, and answers what answer says.
type receiver struct {
	t      *testing.T
	secret webhook.Secret
	answer atomic.Value // func(eventID string, attempt int) int
	delay  atomic.Int64 // how long it takes to answer, in nanoseconds
	mu     sync.Mutex
	got    []message
	tries  map[string]int
	srv    *httptest.Server
}

type message struct {
	ID     string
	Type   string
	Object string
}

func newReceiver(t *testing.T) *receiver {
	secret := webhook.NewSecret()
	r := &receiver{t: t, secret: secret, tries: map[string]int{}}
	r.answer.Store(func(string, int) int { return http.StatusNoContent })
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	time.Sleep(time.Duration(r.delay.Load()))
	body, _ := io.ReadAll(req.Body)
	id, ts := req.Header.Get(webhook.HeaderID), req.Header.Get(webhook.HeaderTimestamp)
	var at int64
	if err := json.Unmarshal([]byte(ts), &at); err != nil {
		r.t.Errorf("webhook-timestamp %q: %v", ts, err)
	}
	if want := webhook.Sign(id, time.Unix(at, 0), body, r.secret); req.Header.Get(webhook.HeaderSignature) != want {
		r.t.Errorf("message %s: signature %q, want %q", id, req.Header.Get(webhook.HeaderSignature), want)
	}
	var msg struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		r.t.Errorf("message %s: body %q: %v", id, body, err)
	}
	r.mu.Lock()
	r.tries[id]++
	status := r.answer.Load().(func(string, int) int)(id, r.tries[id])
	if status/100 == 2 {
		r.got = append(r.got, message{ID: id, Type: msg.Type, Object: msg.Data.ID})
	}
	r.mu.Unlock()
	w.WriteHeader(status)
}

func (r *receiver) received() []message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]message(nil), r.got...)
}

// endpoints is the enabled endpoints as the test sets them.
type endpoints struct {
	mu   sync.Mutex
	list []webhook.Endpoint
}

func (e *endpoints) Active(context.Context) ([]webhook.Endpoint, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]webhook.Endpoint(nil), e.list...), nil
}

type setup struct {
	t         *testing.T
	pool      *pgxpool.Pool
	endpoints *endpoints
}

func newSetup(t *testing.T) *setup {
	return &setup{t: t, pool: testenv.Pool(t), endpoints: &endpoints{}}
}

func (s *setup) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s.t.Cleanup(cancel)
	return ctx
}

// subscribe stores an endpoint for r subscribed to types and lists it
// enabled.
func (s *setup) subscribe(r *receiver, types ...string) uuid.UUID {
	var id uuid.UUID
	if err := s.pool.QueryRow(s.ctx(), `INSERT INTO webhook_endpoints (url, events, secret) VALUES ($1, $2, '\x00') RETURNING id`,
		r.srv.URL, types).Scan(&id); err != nil {
		s.t.Fatal(err)
	}
	s.endpoints.mu.Lock()
	s.endpoints.list = append(s.endpoints.list, webhook.Endpoint{ID: id, URL: r.srv.URL, Secrets: []webhook.Secret{r.secret}})
	s.endpoints.mu.Unlock()
	return id
}

// event writes an event as a change's transaction would; it returns the
// event's id.
func (s *setup) event(typ string, object uuid.UUID) string {
	var id string
	if err := s.pool.QueryRow(s.ctx(), `INSERT INTO webhook_events (type, object_id, data) VALUES ($1, $2::uuid, json_build_object('id', $2::uuid::text)) RETURNING id`,
		typ, object).Scan(&id); err != nil {
		s.t.Fatal(err)
	}
	return id
}

// run starts a Dispatcher with cfg (its polls made short) until the test
// ends.
func (s *setup) run(cfg dispatch.Config) {
	s.runOn(cfg, postgres.NewWebhookDeliveries(s.pool))
}

// runOn is run on store.
func (s *setup) runOn(cfg dispatch.Config, store dispatch.Store) {
	cfg.FanOutEvery, cfg.PollEvery, cfg.ProbeEvery = 20*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond
	if cfg.EndpointsEvery == 0 {
		cfg.EndpointsEvery = 50 * time.Millisecond
	}
	wcfg := webhook.DefaultConfig()
	wcfg.AllowInsecure, wcfg.AllowPrivate, wcfg.Timeout = true, true, 5*time.Second
	sender := webhook.NewSender(wcfg)
	d := dispatch.New(cfg, store, s.endpoints, sender, nil, slog.New(slog.NewTextHandler(testLog{s.t}, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	s.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			s.t.Errorf("Run: %v", err)
		}
		sender.Close()
	})
}

// eventually waits up to 20 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func schedule(t *testing.T, text string) webhook.Schedule {
	s, err := webhook.ParseSchedule(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every event reaches every endpoint subscribed to its type, once,
// signed with the endpoint's secret; the log says succeeded.
func TestEveryEventReachesItsSubscribers(t *testing.T) {
	s := newSetup(t)
	all, holds := newReceiver(t), newReceiver(t)
	allID := s.subscribe(all, webhook.EventTypes()...)
	s.subscribe(holds, webhook.HoldCreated)
	s.run(dispatch.Config{})
	const objects = 40
	for range objects {
		s.event(webhook.HoldCreated, uuid.New())
		s.event(webhook.ReservationCreated, uuid.New())
	}
	eventually(t, "every event delivered", func() bool { return len(all.received()) == 2*objects && len(holds.received()) == objects })
	time.Sleep(200 * time.Millisecond) // room for a duplicate to show
	seen := map[string]bool{}
	for _, m := range all.received() {
		if seen[m.ID] {
			t.Errorf("event %s delivered twice", m.ID)
		}
		seen[m.ID] = true
	}
	if got := len(all.received()); got != 2*objects {
		t.Errorf("%d messages, want %d", got, 2*objects)
	}
	for _, m := range holds.received() {
		if m.Type != webhook.HoldCreated {
			t.Errorf("an endpoint subscribed to hold.created got %s", m.Type)
		}
	}
	// The log is written when a round ends, just after the receiver has
	// the messages.
	eventually(t, "every delivery logged succeeded after one attempt", func() bool {
		var succeeded int
		if err := s.pool.QueryRow(s.ctx(), `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded' AND attempts = 1 AND last_status_code = 204`,
			allID).Scan(&succeeded); err != nil {
			t.Fatal(err)
		}
		return succeeded == 2*objects
	})
}

// A refused message is tried again on the schedule; the object's later
// events wait for it, and other objects' do not.
func TestRetriesKeepOrderPerObject(t *testing.T) {
	s := newSetup(t)
	r := newReceiver(t)
	ep := s.subscribe(r, webhook.EventTypes()...)
	hold, other := uuid.New(), uuid.New()
	created := s.event(webhook.HoldCreated, hold)
	r.answer.Store(func(id string, attempt int) int {
		if id == created && attempt <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	confirmed := s.event(webhook.HoldConfirmed, hold)
	elsewhere := s.event(webhook.ReservationCreated, other)
	s.run(dispatch.Config{Schedule: schedule(t, "300ms,300ms,300ms")})

	eventually(t, "the hold's two events delivered", func() bool { return len(r.received()) == 3 })
	got := r.received()
	order := map[string]int{}
	for i, m := range got {
		order[m.ID] = i
	}
	if order[created] > order[confirmed] {
		t.Errorf("hold.confirmed arrived before hold.created: %+v", got)
	}
	if order[elsewhere] > order[created] {
		t.Errorf("another object's event waited for the hold's retries: %+v", got)
	}
	// hold.confirmed went after hold.created was logged succeeded.
	var attempts int
	var status string
	if err := s.pool.QueryRow(s.ctx(), `SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2`, ep, created).Scan(&status, &attempts); err != nil {
		t.Fatal(err)
	}
	if status != dispatch.Succeeded || attempts != 3 {
		t.Errorf("the refused delivery: %s after %d attempts, want succeeded after 3", status, attempts)
	}
}

// After the schedule's last attempt the delivery has failed, and the
// object's next event goes.
func TestLastAttemptFails(t *testing.T) {
	s := newSetup(t)
	r := newReceiver(t)
	ep := s.subscribe(r, webhook.EventTypes()...)
	hold := uuid.New()
	created := s.event(webhook.HoldCreated, hold)
	r.answer.Store(func(id string, _ int) int {
		if id == created {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	released := s.event(webhook.HoldReleased, hold)
	s.run(dispatch.Config{Schedule: schedule(t, "100ms,100ms")})

	eventually(t, "the release delivered", func() bool { return len(r.received()) == 1 })
	if got := r.received(); got[0].ID != released {
		t.Errorf("delivered %+v, want only the release", got)
	}
	var (
		status   string
		attempts int
		code     int
		lastErr  string
	)
	if err := s.pool.QueryRow(s.ctx(), `SELECT status, attempts, last_status_code, last_error FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2`,
		ep, created).Scan(&status, &attempts, &code, &lastErr); err != nil {
		t.Fatal(err)
	}
	if status != dispatch.Failed || attempts != 3 || code != 500 || lastErr == "" {
		t.Errorf("the refused delivery: %s after %d attempts, last %d %q; want failed after 3, last 500 with its error", status, attempts, code, lastErr)
	}
}

// 410 Gone disables the endpoint: nothing more is sent to it.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	s := newSetup(t)
	r := newReceiver(t)
	r.answer.Store(func(string, int) int { return http.StatusGone })
	ep := s.subscribe(r, webhook.EventTypes()...)
	s.event(webhook.HoldCreated, uuid.New())
	s.run(dispatch.Config{Schedule: schedule(t, "100ms")})

	disabled := func() bool {
		var enabled bool
		var reason *string
		if err := s.pool.QueryRow(s.ctx(), `SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = $1`, ep).Scan(&enabled, &reason); err != nil {
			t.Fatal(err)
		}
		return !enabled && reason != nil && *reason == dispatch.GoneReason
	}
	eventually(t, "the endpoint disabled", disabled)
	r.mu.Lock()
	tries := len(r.tries)
	r.mu.Unlock()
	if tries != 1 {
		t.Errorf("%d messages tried, want 1", tries)
	}
}

// An endpoint that fails delays no other; when it answers again, its
// backlog is sent at once, not at the schedule's next retry.
func TestAFailingEndpointDelaysNoOther(t *testing.T) {
	s := newSetup(t)
	down, up := newReceiver(t), newReceiver(t)
	var failing atomic.Bool
	failing.Store(true)
	down.answer.Store(func(string, int) int {
		if failing.Load() {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	s.subscribe(down, webhook.EventTypes()...)
	s.subscribe(up, webhook.EventTypes()...)
	s.run(dispatch.Config{Schedule: schedule(t, "1h,1h")})

	const events = 30
	for range events {
		s.event(webhook.ReservationCreated, uuid.New())
	}
	eventually(t, "the healthy endpoint served", func() bool { return len(up.received()) == events })
	eventually(t, "the failing endpoint tried with every event", func() bool {
		down.mu.Lock()
		defer down.mu.Unlock()
		return len(down.tries) == events
	})
	if n := len(down.received()); n != 0 {
		t.Fatalf("the failing endpoint took %d", n)
	}
	failing.Store(false)
	// The retries are an hour away: only the probe and the backlog
	// brought forward can deliver them now.
	s.event(webhook.ReservationCreated, uuid.New())
	eventually(t, "the backlog delivered after recovery", func() bool { return len(down.received()) == events+1 })
}

// A slow endpoint holds up no other: the fan-out stops waiting for it,
// the attempt under way is left to finish and its outcome is recorded
// (made once, not again when the fan-out moved on), and the endpoint's
// next event of the object goes to its worker, after it.
func TestASlowEndpointHoldsUpNoOther(t *testing.T) {
	s := newSetup(t)
	slow, fast := newReceiver(t), newReceiver(t)
	const answersAfter = 3 * time.Second // within the sender's 5 s
	slow.delay.Store(int64(answersAfter))
	slowID := s.subscribe(slow, webhook.EventTypes()...)
	s.subscribe(fast, webhook.EventTypes()...)
	s.run(dispatch.Config{FanOutWait: 200 * time.Millisecond})

	hold := uuid.New()
	created := s.event(webhook.HoldCreated, hold)
	eventually(t, "the fast endpoint served", func() bool { return len(fast.received()) == 1 })
	if n := len(slow.received()); n != 0 {
		t.Fatalf("the slow endpoint answered (%d) before the fast one was served: the fan-out waited for it", n)
	}
	slow.delay.Store(0)
	confirmed := s.event(webhook.HoldConfirmed, hold)
	eventually(t, "the fast endpoint served again", func() bool { return len(fast.received()) == 2 })
	eventually(t, "the slow endpoint served both", func() bool { return len(slow.received()) == 2 })
	if got := slow.received(); got[0].ID != created || got[1].ID != confirmed {
		t.Errorf("the slow endpoint got %+v, want hold.created then hold.confirmed", got)
	}
	slow.mu.Lock()
	tries := slow.tries[created]
	slow.mu.Unlock()
	if tries != 1 {
		t.Errorf("hold.created was sent to the slow endpoint %d times, want once", tries)
	}
	eventually(t, "the slow attempt logged", func() bool {
		var status string
		var attempts int
		if err := s.pool.QueryRow(s.ctx(), `SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2`,
			slowID, created).Scan(&status, &attempts); err != nil {
			t.Fatal(err)
		}
		return status == dispatch.Succeeded && attempts == 1
	})
}

// An event whose transaction commits after a later event's (its seq
// earlier, seen late) is delivered all the same.
func TestAnEventSeenLateIsDelivered(t *testing.T) {
	s := newSetup(t)
	r := newReceiver(t)
	s.subscribe(r, webhook.EventTypes()...)
	s.run(dispatch.Config{})
	tx, err := s.pool.Begin(s.ctx())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var late string
	if err := tx.QueryRow(s.ctx(), `INSERT INTO webhook_events (type, object_id, data) VALUES ('hold.created', gen_random_uuid(), '{}') RETURNING id`).Scan(&late); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.event(webhook.HoldCreated, uuid.New())
	}
	eventually(t, "the events committed first delivered", func() bool { return len(r.received()) == 3 })
	if err := tx.Commit(s.ctx()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the event committed late delivered", func() bool {
		return slices.ContainsFunc(r.received(), func(m message) bool { return m.ID == late })
	})
}

// claimCounter counts the deliveries workers claimed, per endpoint.
type claimCounter struct {
	dispatch.Store
	mu      sync.Mutex
	claimed map[uuid.UUID]int
}

func (s *setup) newClaimCounter() *claimCounter {
	return &claimCounter{Store: postgres.NewWebhookDeliveries(s.pool), claimed: map[uuid.UUID]int{}}
}

// of is how many deliveries of endpoint workers have claimed so far.
func (c *claimCounter) of(endpoint uuid.UUID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claimed[endpoint]
}

func (c *claimCounter) ClaimDue(ctx context.Context, endpoint uuid.UUID, limit int, lease time.Duration) ([]dispatch.Due, error) {
	due, err := c.Store.ClaimDue(ctx, endpoint, limit, lease)
	c.mu.Lock()
	c.claimed[endpoint] += len(due)
	c.mu.Unlock()
	return due, err
}

// An endpoint made while fan-outs follow one another without a pause (a
// backlog, a busy minute) is soon sent to by the fan-out, not left to
// its worker for as long as the backlog lasts.
func TestAnEndpointMadeDuringABacklogIsSentToAtOnce(t *testing.T) {
	s := newSetup(t)
	first, later := newReceiver(t), newReceiver(t)
	s.subscribe(first, webhook.EventTypes()...)
	const events = 1500
	if _, err := s.pool.Exec(s.ctx(), `INSERT INTO webhook_events (type, object_id, data)
		SELECT 'hold.created', gen_random_uuid(), '{}' FROM generate_series(1, $1)`, events); err != nil {
		t.Fatal(err)
	}
	store := s.newClaimCounter()
	s.runOn(dispatch.Config{FanOutBatch: 1}, store) // a full batch every time
	eventually(t, "the fan-outs under way", func() bool { return len(first.received()) >= 10 })
	laterID := s.subscribe(later, webhook.EventTypes()...)
	const afterwards = 300 // the later endpoint gets these (and none from before it)
	if _, err := s.pool.Exec(s.ctx(), `INSERT INTO webhook_events (type, object_id, data)
		SELECT 'hold.created', gen_random_uuid(), '{}' FROM generate_series(1, $1)`, afterwards); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every event delivered to the first endpoint", func() bool { return len(first.received()) == events+afterwards })
	// The fan-out writes a delivery it made after the receiver has it: the
	// log is read once it has caught up with what the later endpoint got.
	var owed int
	eventually(t, "every delivery to the later endpoint made and written", func() bool {
		if err := s.pool.QueryRow(s.ctx(), `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, laterID).Scan(&owed); err != nil {
			t.Fatal(err)
		}
		return owed >= afterwards && len(later.received()) >= owed
	})
	got, claimed := len(later.received()), store.of(laterID)
	t.Logf("the later endpoint: %d deliveries, %d received, %d of them by its worker", owed, got, claimed)
	if owed != afterwards || got != owed || claimed > owed/2 {
		t.Errorf("the later endpoint: %d deliveries, %d received, %d of them by its worker; want %d, all received, most by the fan-out",
			owed, got, claimed, afterwards)
	}
}

// A new endpoint's first events are sent by the fan-out, which reads the
// endpoints as soon as it meets one it does not know: not left to the
// endpoint's worker until the next reading.
func TestANewEndpointIsSentToFromItsFirstEvent(t *testing.T) {
	s := newSetup(t)
	known, r := newReceiver(t), newReceiver(t)
	s.subscribe(known, webhook.EventTypes()...)
	store := s.newClaimCounter()
	s.runOn(dispatch.Config{EndpointsEvery: time.Hour}, store)
	s.event(webhook.HoldCreated, uuid.New())
	eventually(t, "the first reading made", func() bool { return len(known.received()) == 1 })
	time.Sleep(200 * time.Millisecond) // past the bound on how often an unknown endpoint makes it read again
	ep := s.subscribe(r, webhook.EventTypes()...)
	id := s.event(webhook.HoldCreated, uuid.New())
	eventually(t, "the first event delivered", func() bool { return len(r.received()) == 1 && r.received()[0].ID == id })
	claimed := store.of(ep)
	if claimed != 0 {
		t.Errorf("the worker claimed %d deliveries, want none (the fan-out sends the first event)", claimed)
	}
}

// testLog writes the dispatcher's log into the test's.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Events nobody subscribed to are marked dispatched all the same, so that
// they do not pile up waiting for an endpoint.
func TestEventsWithoutSubscribersAreDispatched(t *testing.T) {
	s := newSetup(t)
	for range 5 {
		s.event(webhook.HoldCreated, uuid.New())
	}
	s.run(dispatch.Config{})
	eventually(t, "the events marked dispatched", func() bool {
		var waiting int
		if err := s.pool.QueryRow(s.ctx(), `SELECT count(*) FROM webhook_events WHERE NOT dispatched`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting == 0
	})
	var deliveries int
	if err := s.pool.QueryRow(s.ctx(), `SELECT count(*) FROM webhook_deliveries`).Scan(&deliveries); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 {
		t.Errorf("%d deliveries with no endpoint", deliveries)
	}
}
