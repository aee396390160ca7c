package postgres_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/postgres"
)

// A claim statement that failed with its outcome unknown (the connection
// ended while it ran, as when a primary shuts down while the commit waits
// for its synchronous standby) is settled by a look-up: the key unsettled
// under the statement's own claim id is the caller's claim; anything else,
// or an error the server reported, leaves the failure as it was.
func TestUnknownClaimIsSettledByItsID(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	_, pool := newStore(t)
	keys := postgres.NewIdempotencyStore(pool)
	k := idempotency.Key{UserID: "alice", Key: "settle-1"}

	claimed, _, err := keys.Begin(ctx, k, []byte("POST /reservations\n1"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lost := io.ErrUnexpectedEOF
	got, ok := keys.SettleClaim(ctx, k, claimed.ID, lost)
	if !ok || got.ID != claimed.ID || got.Key != k || got.Resumed {
		t.Fatalf("SettleClaim of a committed claim: %+v %v, want the fresh claim %s", got, ok, claimed.ID)
	}
	if _, ok := keys.SettleClaim(ctx, k, uuid.New(), lost); ok {
		t.Fatal("a claim id the key does not hold was settled as ours")
	}
	if _, ok := keys.SettleClaim(ctx, idempotency.Key{UserID: "alice", Key: "never-claimed"}, claimed.ID, lost); ok {
		t.Fatal("a key that was never claimed was settled as ours")
	}
	reported := &pgconn.PgError{Severity: "ERROR", Code: pgerrcode.UniqueViolation}
	if _, ok := keys.SettleClaim(ctx, k, claimed.ID, reported); ok {
		t.Fatal("an error the server reported was settled as a commit")
	}
	if _, ok := keys.SettleClaim(ctx, k, claimed.ID, context.DeadlineExceeded); !ok {
		t.Fatal("a claim whose context ended while it ran was not settled")
	}

	// Once answered, the key is no longer a running claim to take.
	if err := keys.Finish(ctx, claimed, idempotency.Response{Status: 200, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys.SettleClaim(ctx, k, claimed.ID, lost); ok {
		t.Fatal("a finished key was settled as a running claim")
	}
}
