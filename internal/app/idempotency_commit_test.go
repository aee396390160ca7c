package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// commitGateKey is the advisory lock that holds a gated user's writes at
// their COMMIT.
const commitGateKey = 4242

// installCommitGate makes every COMMIT that wrote a reservation or a hold of
// user (an insert, or an update such as a cancellation) wait, inside
// PostgreSQL, for the advisory lock commitGateKey: deferred constraint
// triggers run at COMMIT, after every statement of the transaction has
// been answered. While the test holds that lock (closeGate), such a COMMIT
// has reached PostgreSQL and waits; the test can then break the
// connection's replies and let it go on (openGate): the work commits, its
// reply is lost. Every test has a database of its own.
func installCommitGate(t *testing.T, h *harness, user string) {
	t.Helper()
	for _, stmt := range []string{
		`CREATE FUNCTION test_commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_advisory_xact_lock(` + fmt.Sprint(commitGateKey) + `); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER test_gate_reservations AFTER INSERT OR UPDATE ON reservations
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.user_id = '` + user + `') EXECUTE FUNCTION test_commit_gate()`,
		`CREATE CONSTRAINT TRIGGER test_gate_holds AFTER INSERT ON holds
		DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.user_id = '` + user + `') EXECUTE FUNCTION test_commit_gate()`,
	} {
		if _, err := h.pool.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("install the commit gate: %v", err)
		}
	}
}

// commitGate is the gate closed: the advisory lock held by a connection of
// the test's own (not through the proxy).
type commitGate struct {
	t    *testing.T
	h    *harness
	conn *pgxpool.Conn
}

func closeGate(t *testing.T, h *harness) *commitGate {
	t.Helper()
	conn, err := h.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_lock($1)`, commitGateKey); err != nil {
		conn.Release()
		t.Fatal(err)
	}
	g := &commitGate{t: t, h: h, conn: conn}
	t.Cleanup(g.open)
	return g
}

// waiter returns the pid of the backend whose COMMIT waits at the gate,
// waiting for one up to faultPatience.
func (g *commitGate) waiter() int {
	g.t.Helper()
	deadline := time.Now().Add(faultPatience)
	for {
		var pid int
		err := g.h.pool.QueryRow(context.Background(), `SELECT coalesce(min(pid), 0) FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND classid = 0 AND objid = $1 AND objsubid = 1
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, commitGateKey).Scan(&pid)
		if err != nil {
			g.t.Fatal(err)
		}
		if pid != 0 {
			return pid
		}
		if time.Now().After(deadline) {
			g.t.Fatal("no COMMIT came to the gate")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// open lets the waiting COMMIT go on (idempotent).
func (g *commitGate) open() {
	if g.conn == nil {
		return
	}
	if _, err := g.conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, commitGateKey); err != nil {
		g.t.Error(err)
	}
	g.conn.Release()
	g.conn = nil
}

// keyed is one request with an Idempotency-Key, sent as often as needed,
// with an Admission when one is set.
type keyed struct {
	method, path, body, key string
	admission               string
}

func (h *harness) send(user string, k keyed) response {
	h.t.Helper()
	req := request{method: k.method, path: k.path, token: h.token(user, ""), body: k.body,
		header: map[string]string{"Idempotency-Key": k.key}}
	if k.admission != "" {
		req.header["Admission"] = k.admission
	}
	if k.body != "" {
		req.contentType = "application/json"
	}
	return h.do(req)
}

// loseCommitReply sends k with its COMMIT's reply lost: the COMMIT reaches
// PostgreSQL and waits at the gate, the proxy is set to reset every
// connection as its next reply comes back (reset_peer), and the COMMIT goes
// on. The answer is 503 unavailable: the work committed, nobody could see
// it. The statement must reach the gate within the 2 s bound on a write
// under the seats' locks; the test sees it there within milliseconds.
func (h *harness) loseCommitReply(pgProxy *lockenv.Proxy, user string, k keyed) response {
	h.t.Helper()
	gate := closeGate(h.t, h)
	answer := make(chan response, 1)
	go func() { answer <- h.send(user, k) }()
	gate.waiter()
	pgProxy.AddToxic(lockenv.Toxic{Name: "lost-replies", Type: "reset_peer", Stream: "downstream",
		Attributes: map[string]any{"timeout": 0}})
	gate.open()
	resp := <-answer
	pgProxy.RemoveToxic("lost-replies")
	expectUnavailable(h.t, resp)
	return resp
}

// retryAfterLoss retries k as a client does after an answer it could not
// trust, until it is answered otherwise than 409 idempotency_key_in_use or
// 503. The first request could not release its key (PostgreSQL was what
// failed), so the key stays in use for its running time (LOCK_MAX_WAIT +
// 20 s); the test lets that time pass at once by moving the key's
// locked_until to now, as the clock would.
func (h *harness) retryAfterLoss(user string, k keyed) response {
	h.t.Helper()
	deadline := time.Now().Add(faultPatience)
	for {
		resp := h.send(user, k)
		switch {
		case resp.status == http.StatusConflict && resp.code() == "idempotency_key_in_use":
			if resp.header.Get("Retry-After") == "" {
				h.t.Errorf("409 idempotency_key_in_use without Retry-After")
			}
			if _, err := h.pool.Exec(context.Background(),
				`UPDATE idempotency_keys SET locked_until = now() WHERE user_id = $1 AND key = $2 AND status IS NULL`, user, k.key); err != nil {
				h.t.Fatal(err)
			}
		case resp.status == http.StatusServiceUnavailable && resp.code() == "unavailable":
			// A pooled connection the reset left behind.
		default:
			return resp
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s %s: still %d %s after %v", k.method, k.path, resp.status, resp.raw, faultPatience)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectRecovered checks a retry's answer: the original status, marked
// Idempotent-Replayed (it is the lost answer), and a further retry replays
// it byte for byte.
func (h *harness) expectRecovered(user string, k keyed, got response, status int) {
	h.t.Helper()
	if got.status != status || got.header.Get("Idempotent-Replayed") != "true" {
		h.t.Fatalf("retry of %s %s: %d %s (Idempotent-Replayed %q), want %d recovered",
			k.method, k.path, got.status, got.raw, got.header.Get("Idempotent-Replayed"), status)
	}
	again := h.send(user, k)
	if again.status != got.status || again.raw != got.raw || again.header.Get("Idempotent-Replayed") != "true" {
		h.t.Errorf("second retry: %d %s, want the recovered answer replayed: %d %s", again.status, again.raw, got.status, got.raw)
	}
}

// The reply to a write's COMMIT is lost after PostgreSQL committed it: the
// client is answered 503; its retry with the same key gets the original
// success, with the same reservation or hold, and nothing is written
// twice. One sub-test per write that takes a key.
func TestIdempotentRetryAfterLostCommit(t *testing.T) {
	t.Parallel()
	const user = "alice"
	setup := func(t *testing.T) (*harness, *lockenv.Proxy, int64) {
		h, _, pgProxy := faultyHarness(t)
		installCommitGate(t, h, user)
		schedule := h.createScheduleDirect(4)
		// Warm up: connections open, the schedule cached.
		if resp := h.reserve(0, "carol", schedule, 4); resp.status != http.StatusOK {
			t.Fatalf("booking before the fault: %d %s", resp.status, resp.raw)
		}
		return h, pgProxy, schedule
	}
	count := func(t *testing.T, h *harness, sql string, args ...any) int {
		t.Helper()
		var n int
		if err := h.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("reservation", func(t *testing.T) {
		t.Parallel()
		h, pgProxy, schedule := setup(t)
		k := keyed{method: http.MethodPost, path: "/reservations", key: "order-1",
			body: fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)}
		h.loseCommitReply(pgProxy, user, k)
		var id string
		if err := h.pool.QueryRow(context.Background(), `SELECT id::text FROM reservations
			WHERE schedule_id = $1 AND seat_id = 1 AND user_id = $2`, schedule, user).Scan(&id); err != nil {
			t.Fatalf("the booking answered 503 did not commit: %v", err)
		}
		got := h.retryAfterLoss(user, k)
		h.expectRecovered(user, k, got, http.StatusOK)
		if str(got.body, "id") != id || str(got.body, "userId") != user {
			t.Errorf("recovered %s, want reservation %s", got.raw, id)
		}
		if n := h.reservationRows(schedule, 1); n != 1 {
			t.Errorf("%d rows for the seat, want 1", n)
		}
	})

	t.Run("hold", func(t *testing.T) {
		t.Parallel()
		h, pgProxy, schedule := setup(t)
		k := keyed{method: http.MethodPost, path: "/holds", key: "cart-1",
			body: fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,2]}`, schedule)}
		h.loseCommitReply(pgProxy, user, k)
		var id string
		if err := h.pool.QueryRow(context.Background(), `SELECT id::text FROM holds WHERE user_id = $1`, user).Scan(&id); err != nil {
			t.Fatalf("the hold answered 503 did not commit: %v", err)
		}
		got := h.retryAfterLoss(user, k)
		h.expectRecovered(user, k, got, http.StatusCreated)
		if str(got.body, "id") != id || got.header.Get("Location") != "/holds/"+id || str(got.body, "status") != "active" {
			t.Errorf("recovered %s (Location %q), want hold %s", got.raw, got.header.Get("Location"), id)
		}
		if n := count(t, h, `SELECT count(*) FROM holds WHERE user_id = $1`, user); n != 1 {
			t.Errorf("%d holds, want 1", n)
		}
	})

	t.Run("confirm", func(t *testing.T) {
		t.Parallel()
		h, pgProxy, schedule := setup(t)
		held := h.hold(0, user, schedule, 1, 2)
		if held.status != http.StatusCreated {
			t.Fatalf("hold: %d %s", held.status, held.raw)
		}
		holdID := str(held.body, "id")
		k := keyed{method: http.MethodPost, path: "/holds/" + holdID + "/confirm", key: "pay-1"}
		h.loseCommitReply(pgProxy, user, k)
		if n := count(t, h, `SELECT count(*) FROM reservations WHERE hold_id = $1`, holdID); n != 2 {
			t.Fatalf("the confirmation answered 503 left %d reservations, want it committed (2)", n)
		}
		got := h.retryAfterLoss(user, k)
		h.expectRecovered(user, k, got, http.StatusOK)
		// The answer is the one the first request would have given: a
		// confirmation under another key gives the same bytes.
		other := h.send(user, keyed{method: http.MethodPost, path: k.path, key: "pay-2"})
		if other.status != http.StatusOK || other.raw != got.raw || other.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("confirmed again under another key: %d %s, want the same answer %s, not replayed", other.status, other.raw, got.raw)
		}
		if n := count(t, h, `SELECT count(*) FROM reservations WHERE schedule_id = $1 AND seat_id IN (1, 2)`, schedule); n != 2 {
			t.Errorf("%d reservations for the hold's seats, want 2", n)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		h, pgProxy, schedule := setup(t)
		booked := h.reserve(0, user, schedule, 1)
		if booked.status != http.StatusOK {
			t.Fatalf("booking: %d %s", booked.status, booked.raw)
		}
		id := str(booked.body, "id")
		k := keyed{method: http.MethodDelete, path: "/reservations/" + id, key: "cancel-1"}
		h.loseCommitReply(pgProxy, user, k)
		if n := count(t, h, `SELECT count(*) FROM reservations WHERE id = $1 AND cancelled_at IS NOT NULL`, id); n != 1 {
			t.Fatal("the cancellation answered 503 did not commit")
		}
		got := h.retryAfterLoss(user, k)
		h.expectRecovered(user, k, got, http.StatusNoContent)
		if got.raw != "" {
			t.Errorf("204 with a body: %q", got.raw)
		}
		if n := count(t, h, `SELECT count(*) FROM reservations WHERE schedule_id = $1 AND seat_id = 1`, schedule); n != 1 {
			t.Errorf("%d rows for the seat, want 1", n)
		}
	})
}

// A first request that did not commit (its COMMIT waited, the request's
// write bound ended it, and its transaction was rolled back) is answered
// 503 and releases its key: the retry with the same key runs afresh at
// once and books, once.
func TestIdempotentRetryAfterRolledBackWrite(t *testing.T) {
	t.Parallel()
	const user = "alice"
	h, _, _ := faultyHarness(t)
	installCommitGate(t, h, user)
	schedule := h.createScheduleDirect(2)
	k := keyed{method: http.MethodPost, path: "/reservations", key: "order-1",
		body: fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)}

	gate := closeGate(t, h)
	answer := make(chan response, 1)
	go func() { answer <- h.send(user, k) }()
	pid := gate.waiter()
	first := <-answer // after the 2 s write bound and the outcome look-up
	expectUnavailable(t, first)
	// The instance has given up on the statement; PostgreSQL ends it.
	if _, err := h.pool.Exec(context.Background(), `SELECT pg_cancel_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	gate.open()
	deadline := time.Now().Add(faultPatience)
	for h.reservationRows(schedule, 1) != 0 || h.hasWaiter() {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled COMMIT did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}

	retry := h.send(user, k)
	if retry.status != http.StatusOK || retry.header.Get("Idempotent-Replayed") != "" || str(retry.body, "userId") != user {
		t.Fatalf("retry: %d %s (Idempotent-Replayed %q), want a fresh 200", retry.status, retry.raw, retry.header.Get("Idempotent-Replayed"))
	}
	replay := h.send(user, k)
	if replay.raw != retry.raw || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("second retry: %d %s, want the retry's answer replayed", replay.status, replay.raw)
	}
	if n := h.reservationRows(schedule, 1); n != 1 {
		t.Errorf("%d rows for the seat, want 1", n)
	}
}

// hasWaiter reports whether a COMMIT still waits at the gate.
func (h *harness) hasWaiter() bool {
	h.t.Helper()
	var n int
	if err := h.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND classid = 0 AND objid = $1 AND objsubid = 1
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, commitGateKey).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n != 0
}
