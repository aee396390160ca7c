package postgres_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// The life of a key: claimed, in use, released with its claim (the
// request's answer was lost), resumed with the same claim by a retry with
// the same fingerprint, then finished and replayed.
func TestIdempotencyReleaseKeepsTheClaim(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	store, pool := newStore(t)
	keys := postgres.NewIdempotencyStore(pool)
	k := idempotency.Key{UserID: "alice", Key: "order-1"}
	fp, other := []byte("POST /reservations\n1"), []byte("POST /reservations\n2")

	first, stored, err := keys.Begin(ctx, k, fp, time.Minute)
	if err != nil || stored != nil || first.ID == uuid.Nil || first.Resumed {
		t.Fatalf("first Begin: %+v %v %v, want a fresh claim", first, stored, err)
	}
	if _, _, err := keys.Begin(ctx, k, fp, time.Minute); !errors.Is(err, idempotency.ErrKeyInUse) {
		t.Fatalf("Begin while running: %v, want ErrKeyInUse", err)
	}
	// The request booked under its claim, then its answer was lost.
	schedule := mustSchedule(t, store, 3)
	booked, err := store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: schedule.ID(), SeatID: 1,
		UserID: "alice", Fence: nextFence(), Claim: first.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Release(ctx, first); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if _, _, err := keys.Begin(ctx, k, other, time.Minute); !errors.Is(err, idempotency.ErrKeyReused) {
		t.Fatalf("Begin with another fingerprint after Release: %v, want ErrKeyReused", err)
	}
	resumed, stored, err := keys.Begin(ctx, k, fp, time.Minute)
	if err != nil || stored != nil || resumed.ID != first.ID || !resumed.Resumed {
		t.Fatalf("Begin after Release: %+v %v %v, want the first claim resumed", resumed, stored, err)
	}
	if _, _, err := keys.Begin(ctx, k, fp, time.Minute); !errors.Is(err, idempotency.ErrKeyInUse) {
		t.Fatalf("Begin while the resumed claim runs: %v, want ErrKeyInUse", err)
	}
	found, err := store.ReservationByClaim(ctx, resumed.ID)
	if err != nil || found.ID() != booked.ID() {
		t.Fatalf("ReservationByClaim(resumed claim) = %v, %v; want %v", found.ID(), err, booked.ID())
	}

	answer := idempotency.Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"id":1}`)}
	if err := keys.Finish(ctx, resumed, answer); err != nil {
		t.Fatal(err)
	}
	// Releasing a settled key changes nothing.
	if err := keys.Release(ctx, resumed); err != nil {
		t.Fatal(err)
	}
	_, stored, err = keys.Begin(ctx, k, fp, time.Minute)
	if err != nil || stored == nil || stored.Status != http.StatusOK || string(stored.Body) != `{"id":1}` {
		t.Fatalf("Begin after Finish: %+v %v, want the answer", stored, err)
	}
}

// A request that outlived its running time leaves its key to a retry with
// the same claim; an expired key, and an abandoned one, start afresh.
func TestIdempotencyTakeOverKeepsOrRenewsTheClaim(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	_, pool := newStore(t)
	keys := postgres.NewIdempotencyStore(pool)
	fp := []byte("POST /holds\n{}")

	lapsed := idempotency.Key{UserID: "alice", Key: "lapsed"}
	first, _, err := keys.Begin(ctx, lapsed, fp, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE key = 'lapsed'`); err != nil {
		t.Fatal(err)
	}
	again, _, err := keys.Begin(ctx, lapsed, fp, time.Minute)
	if err != nil || again.ID != first.ID || !again.Resumed {
		t.Errorf("Begin after the running time: %+v %v, want %v resumed", again, err, first.ID)
	}

	expired := idempotency.Key{UserID: "alice", Key: "expired"}
	first, _, err = keys.Begin(ctx, expired, fp, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'expired'`); err != nil {
		t.Fatal(err)
	}
	fresh, _, err := keys.Begin(ctx, expired, []byte("another request"), time.Minute)
	if err != nil || fresh.ID == first.ID || fresh.Resumed {
		t.Errorf("Begin after expiry: %+v %v, want a new claim", fresh, err)
	}

	abandoned := idempotency.Key{UserID: "alice", Key: "abandoned"}
	first, _, err = keys.Begin(ctx, abandoned, fp, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Abandon(ctx, first); err != nil {
		t.Fatal(err)
	}
	fresh, _, err = keys.Begin(ctx, abandoned, fp, time.Minute)
	if err != nil || fresh.ID == first.ID || fresh.Resumed {
		t.Errorf("Begin after Abandon: %+v %v, want a new claim", fresh, err)
	}
}
