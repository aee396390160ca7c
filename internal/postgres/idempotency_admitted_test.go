package postgres_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/postgres"
)

// A key's admission is recorded, not inferred: a claim resumed after its
// request passed the gate (Admit) is Admitted; one resumed without that
// record is not, nor is a new claim on an expired or abandoned key.
func TestIdempotencyAdmitIsKeptForTheResume(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	_, pool := newStore(t)
	keys := postgres.NewIdempotencyStore(pool)
	fp := []byte("POST /holds\n{}")

	resume := func(k idempotency.Key) idempotency.Claim {
		t.Helper()
		claim, stored, err := keys.Begin(ctx, k, fp, time.Minute)
		if err != nil || stored != nil {
			t.Fatalf("Begin %s: %v %v", k.Key, stored, err)
		}
		return claim
	}
	released := func(k idempotency.Key, admit bool) idempotency.Claim {
		t.Helper()
		claim := resume(k)
		if claim.Admitted {
			t.Fatalf("a new claim on %s is Admitted", k.Key)
		}
		if admit {
			if err := keys.Admit(ctx, claim); err != nil {
				t.Fatalf("Admit: %v", err)
			}
		}
		if err := keys.Release(ctx, claim); err != nil {
			t.Fatal(err)
		}
		return claim
	}

	admitted := idempotency.Key{UserID: "alice", Key: "admitted"}
	first := released(admitted, true)
	again := resume(admitted)
	if !again.Resumed || again.ID != first.ID || !again.Admitted {
		t.Errorf("resumed after Admit: %+v, want the first claim, resumed and admitted", again)
	}
	// It stays admitted for every later resume of that claim.
	if err := keys.Release(ctx, again); err != nil {
		t.Fatal(err)
	}
	if third := resume(admitted); !third.Resumed || !third.Admitted {
		t.Errorf("resumed a second time: %+v, want admitted still", third)
	}

	gated := idempotency.Key{UserID: "alice", Key: "never-admitted"}
	released(gated, false)
	if c := resume(gated); !c.Resumed || c.Admitted {
		t.Errorf("resumed without Admit: %+v, want resumed and not admitted", c)
	}

	expired := idempotency.Key{UserID: "alice", Key: "expired"}
	released(expired, true)
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'expired'`); err != nil {
		t.Fatal(err)
	}
	if c := resume(expired); c.Resumed || c.Admitted {
		t.Errorf("a new claim on an expired key: %+v, want neither resumed nor admitted", c)
	}

	abandoned := idempotency.Key{UserID: "alice", Key: "abandoned"}
	claim := resume(abandoned)
	if err := keys.Admit(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if err := keys.Abandon(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if c := resume(abandoned); c.Resumed || c.Admitted {
		t.Errorf("a new claim after Abandon: %+v, want neither resumed nor admitted", c)
	}

	// A settled key is not changed by a late Admit of its claim.
	settled := idempotency.Key{UserID: "alice", Key: "settled"}
	claim = resume(settled)
	if err := keys.Finish(ctx, claim, idempotency.Response{Status: http.StatusCreated, Header: http.Header{}, Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := keys.Admit(ctx, claim); err != nil {
		t.Fatal(err)
	}
	var flagged bool
	if err := pool.QueryRow(ctx, `SELECT admitted FROM idempotency_keys WHERE key = 'settled'`).Scan(&flagged); err != nil || flagged {
		t.Errorf("a settled key after Admit: admitted %v (%v), want false", flagged, err)
	}
}
