package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// killWriteBound is TestFaultPostgresKilledMidTransaction's bound on a
// write: far above the slowed transaction's few seconds and its second
// run.
const killWriteBound = 20 * time.Second

// PostgreSQL kills the backend serving a hold's transaction half-way
// (pg_terminate_backend: what an operator, or a server shutting down,
// does to a session), after the hold, its claims and its user's count are
// written and before it commits. PostgreSQL rolls the transaction back whole and says
// why (57P01), so the store runs it again on a new connection: the
// client gets 201, with one hold and its claims, nothing of the killed
// transaction is left, and the seats' locks are released as usual.
func TestFaultPostgresKilledMidTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The hold's transaction sends its round trips (begin, its
	// statements, its event, commit) one after another, each half a second
	// late below: it is caught about 1 s after the write began and would
	// commit at 2 s, the production bound on a write
	// (reservation.DefaultWriteTimeout), which leaves no time to run it
	// again.
	h := newHarnessWith(t, 0, faultTuning, app.WithWriteTimeout(killWriteBound))
	cfg := h.cfg
	var pgProxy *lockenv.Proxy
	// The instance's sessions are named, so that the test kills theirs
	// and no other.
	cfg.DatabaseURL, pgProxy = proxiedURL(t, withParam(t, cfg.DatabaseURL, "application_name", "faulty-instance"))
	h.bases = append(h.bases, h.serve(cfg))
	const seats = 3
	schedule := h.createScheduleDirect(seats)
	if held := h.hold(0, "carol", schedule, 3); held.status != http.StatusCreated {
		t.Fatalf("hold before the fault: %d %s", held.status, held.raw)
	} else if resp := h.release(0, "carol", str(held.body, "id")); resp.status != http.StatusNoContent {
		t.Fatalf("release before the fault: %d %s", resp.status, resp.raw)
	}

	// Each round trip reaches PostgreSQL half a second late: the hold's
	// transaction stays open between them long enough to be caught, its
	// last statement so far the user's count of live holds.
	pgProxy.AddToxic(lockenv.Toxic{Name: "slow-statements", Type: "latency", Stream: "upstream",
		Attributes: map[string]any{"latency": 500}})
	answer := make(chan response, 1)
	go func() { answer <- h.hold(0, "alice", schedule, 1, 2) }()
	deadline := time.Now().Add(faultPatience)
	var killedAt time.Time
	for {
		killedAt = time.Now()
		var killed bool
		err := h.pool.QueryRow(ctx, `SELECT coalesce(bool_or(pg_terminate_backend(pid)), false) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = 'faulty-instance'
			  AND backend_xid IS NOT NULL AND query LIKE '%INSERT INTO live_holds_by_user%'`).Scan(&killed)
		if err != nil {
			t.Fatal(err)
		}
		if killed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never caught the hold's transaction open")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The statements go at full speed again, as the transaction is run
	// again: the fault was the kill, not the slowness that let the test
	// catch the transaction.
	pgProxy.RemoveToxic("slow-statements")
	held := <-answer
	answered := time.Since(killedAt)
	if held.status != http.StatusCreated {
		t.Fatalf("the hold whose transaction was killed: %d %s, want 201 from the transaction run again", held.status, held.raw)
	}

	holdID := str(held.body, "id")
	var holds, ownClaims, claims int
	err := h.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM holds WHERE schedule_id = $1 AND user_id = 'alice'),
		(SELECT count(*) FROM seat_claims WHERE schedule_id = $1 AND hold_id = $2),
		(SELECT count(*) FROM seat_claims WHERE schedule_id = $1)`, schedule, holdID).Scan(&holds, &ownClaims, &claims)
	if err != nil {
		t.Fatal(err)
	}
	if holds != 1 || ownClaims != 2 || claims != 2 {
		t.Errorf("after the killed transaction and its second run: %d holds of alice, %d claims of hold %s, %d claims in all; want 1, 2, 2",
			holds, ownClaims, holdID, claims)
	}
	if resp := h.release(0, "alice", holdID); resp.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", resp.status, resp.raw)
	}
	if again := h.hold(0, "alice", schedule, 1, 2); again.status != http.StatusCreated {
		t.Fatalf("hold after the fault: %d %s", again.status, again.raw)
	} else if resp := h.release(0, "alice", str(again.body, "id")); resp.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", resp.status, resp.raw)
	}
	h.expectSettled(h.redis, schedule, seats)
	logFault(t, "postgres-killed-mid-transaction", -1, answered, time.Since(killedAt))
}
