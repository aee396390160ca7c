package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// PostgreSQL kills the backend serving a hold's transaction half-way
// (pg_terminate_backend: what a crashed or restarted backend, or an
// operator, does to a session), after the hold's row is written and
// before its seats are claimed. The client gets 503 with Retry-After at
// once; the transaction is rolled back whole (no hold, no claim), the
// seats' locks are released, and the same instance holds the seats at the
// next try.
func TestFaultPostgresKilledMidTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarnessWith(t, 0, faultTuning)
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

	// Each statement reaches PostgreSQL half a second late: the hold's
	// transaction stays open between them long enough to be caught.
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
			  AND backend_xid IS NOT NULL AND query LIKE '%INSERT INTO holds%'`).Scan(&killed)
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
	resp := <-answer
	first503 := time.Since(killedAt)
	expectUnavailable(t, resp)
	if first503 > 5*time.Second {
		t.Errorf("503 came %v after the backend was killed, want it within 5 s", first503)
	}
	pgProxy.RemoveToxic("slow-statements")

	var holds, claims int
	err := h.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM holds WHERE schedule_id = $1 AND user_id = 'alice'),
		(SELECT count(*) FROM seat_claims WHERE schedule_id = $1 AND seat_id IN (1, 2))`, schedule).Scan(&holds, &claims)
	if err != nil {
		t.Fatal(err)
	}
	if holds != 0 || claims != 0 {
		t.Errorf("the killed transaction left %d holds and %d claims, want none", holds, claims)
	}

	var recovery time.Duration
	for {
		held := h.hold(0, "alice", schedule, 1, 2)
		if held.status == http.StatusCreated {
			recovery = time.Since(killedAt)
			if resp := h.release(0, "alice", str(held.body, "id")); resp.status != http.StatusNoContent {
				t.Fatalf("release: %d %s", resp.status, resp.raw)
			}
			break
		}
		if held.status != http.StatusServiceUnavailable {
			if reasons := unavailableSeats(t, held); reasons[1] != "locked" && reasons[2] != "locked" {
				t.Fatalf("hold after the fault: %s", held.raw)
			}
		}
		if time.Since(killedAt) > faultPatience {
			t.Fatalf("seats 1-2 not held %v after the fault: %d %s", faultPatience, held.status, held.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.expectSettled(h.redis, schedule, seats)
	logFault(t, "postgres-killed-mid-transaction", first503, recovery, time.Since(killedAt))
}
