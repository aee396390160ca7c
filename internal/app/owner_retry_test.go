package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// The one-click path's natural idempotency: the owner who books their own
// seat again, with no Idempotency-Key (the first answer was lost), gets
// 200 and the same reservation, and the seat keeps one row; anyone else
// gets 409 seat_taken from the seal alone, with no statement reaching
// PostgreSQL. The statements are counted on the wire between the instance
// and PostgreSQL, and the count is shown to be live: the owner's retry is
// seen as its one look-up.
func TestOwnersRetryWithoutKey(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, 0, func(*config.Config) {}, app.WithoutJobs())
	cfg := h.cfg
	var pg *statementCounter
	cfg.DatabaseURL, pg = countedDatabaseURL(t, cfg.DatabaseURL)
	h.bases = append(h.bases, h.serve(cfg))
	schedule := h.createSchedule(3)
	alice, bob := h.token("alice", ""), h.token("bob", "")
	seat := map[string]any{"scheduleId": schedule, "seatId": 2}

	first := h.postJSON("/reservations", alice, seat)
	if first.status != http.StatusOK {
		t.Fatalf("first booking: %d %s", first.status, first.raw)
	}
	key := reservation.SeatLockKey(schedule, 2)
	if v, want := h.redis.Get(context.Background(), key).Val(), redislock.SealedWith(reservation.OwnerNote("alice")); v != want {
		t.Fatalf("seat key holds %q, want the seal with alice's note %q", v, want)
	}

	before := pg.statements()
	again := h.postJSON("/reservations", alice, seat)
	if again.status != http.StatusOK || again.body["id"] != first.body["id"] || again.body["userId"] != "alice" {
		t.Fatalf("the owner's retry: %d %s, want 200 with reservation %v", again.status, again.raw, first.body["id"])
	}
	if again.body["createdAt"] != first.body["createdAt"] {
		t.Errorf("the owner's retry: createdAt %v, want the first booking's %v", again.body["createdAt"], first.body["createdAt"])
	}
	if n := pg.statements() - before; n != 1 {
		t.Errorf("the owner's retry ran %d statements, want its one look-up", n)
	}
	if n := h.reservationRows(schedule, 2); n != 1 {
		t.Errorf("rows = %d after the owner's retry, want 1", n)
	}

	before = pg.statements()
	other := h.postJSON("/reservations", bob, seat)
	expectProblem(t, other, http.StatusConflict, "seat_taken")
	if n := pg.statements() - before; n != 0 {
		t.Errorf("another user's booking of the sealed seat ran %d statements, want none", n)
	}
	if n := h.reservationRows(schedule, 2); n != 1 {
		t.Errorf("rows = %d after another user's booking, want 1", n)
	}
}
