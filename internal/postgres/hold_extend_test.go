package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

func extend(t *testing.T, store *postgres.Store, h reservation.Hold, user string, ttl, maxLifetime time.Duration) (reservation.Hold, error) {
	t.Helper()
	return store.ExtendHold(testContext(t), reservation.HoldExtension{ID: h.ID(), UserID: user, TTL: ttl, MaxLifetime: maxLifetime})
}

// holdRow reads a hold's expiry and the expiries of its claims directly.
func holdRow(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) (expires time.Time, claims []time.Time) {
	t.Helper()
	ctx := testContext(t)
	if err := pool.QueryRow(ctx, `SELECT expires_at FROM holds WHERE id = $1`, id).Scan(&expires); err != nil {
		t.Fatalf("read hold %s: %v", id, err)
	}
	rows, err := pool.Query(ctx, `SELECT expires_at FROM seat_claims WHERE hold_id = $1 ORDER BY seat_id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e time.Time
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		claims = append(claims, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return expires, claims
}

// expectMovedTogether fails unless the hold and each of its seats' claims
// expire at want.
func expectMovedTogether(t *testing.T, pool *pgxpool.Pool, h reservation.Hold, want time.Time) {
	t.Helper()
	expires, claims := holdRow(t, pool, h.ID())
	if !expires.Equal(want) {
		t.Errorf("holds.expires_at = %s, want %s", expires, want)
	}
	if len(claims) != len(h.SeatIDs()) {
		t.Fatalf("%d claims, want one for each of the seats %v", len(claims), h.SeatIDs())
	}
	for i, c := range claims {
		if !c.Equal(want) {
			t.Errorf("claim of seat %d expires at %s, want %s with its hold", h.SeatIDs()[i], c, want)
		}
	}
}

func TestExtendHoldMovesTheHoldAndEveryClaim(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	h := mustHold(t, store, s.ID(), "alice", time.Minute, 7, 2, 4)
	other := mustHold(t, store, s.ID(), "bob", time.Minute, 5)

	got, err := extend(t, store, h, "alice", 10*time.Minute, 30*time.Minute)
	if err != nil {
		t.Fatalf("ExtendHold: %v", err)
	}
	if got.ID() != h.ID() || got.Status() != reservation.HoldActive || !got.CreatedAt().Equal(h.CreatedAt()) ||
		got.UserID() != "alice" || len(got.SeatIDs()) != 3 {
		t.Errorf("extended hold = %+v, want %+v active", got, h)
	}
	if left := time.Until(got.ExpiresAt()); left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("extended hold expires in %s, want about 10 minutes", left)
	}
	expectMovedTogether(t, pool, h, got.ExpiresAt())
	if read, err := store.Hold(ctx, h.ID()); err != nil || !read.ExpiresAt().Equal(got.ExpiresAt()) {
		t.Errorf("Hold after the extension = %+v, %v; want it to expire at %s", read, err, got.ExpiresAt())
	}
	// Another hold's claim is left as it was.
	expectMovedTogether(t, pool, other, other.ExpiresAt())
	// The seats are still held: refused to others, confirmable.
	if _, err := insert(ctx, store, s.ID(), 4, "carol", nextFence()); !errors.Is(err, reservation.ErrSeatHeld) {
		t.Errorf("booking an extended hold's seat = %v, want ErrSeatHeld", err)
	}
	if booked, err := store.ConfirmHold(ctx, h.ID(), "alice"); err != nil || len(booked) != 3 {
		t.Errorf("ConfirmHold after the extension = %v, %v; want 3 reservations", booked, err)
	}
}

func TestExtendHoldIsCappedAtItsMaxLifetime(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	h := mustHold(t, store, s.ID(), "alice", time.Minute, 1, 2)

	// now + 10 minutes is past the cap: the hold ends at the cap.
	got, err := extend(t, store, h, "alice", 10*time.Minute, 3*time.Minute)
	if err != nil {
		t.Fatalf("ExtendHold: %v", err)
	}
	if want := h.CreatedAt().Add(3 * time.Minute); !got.ExpiresAt().Equal(want) {
		t.Errorf("capped hold expires at %s, want created_at + 3m = %s", got.ExpiresAt(), want)
	}
	expectMovedTogether(t, pool, h, got.ExpiresAt())

	// At its cap, nothing is left to extend.
	if _, err := extend(t, store, h, "alice", 10*time.Minute, 3*time.Minute); !errors.Is(err, reservation.ErrHoldLifetimeExceeded) {
		t.Errorf("extending a hold at its cap = %v, want ErrHoldLifetimeExceeded", err)
	}
	expectMovedTogether(t, pool, h, got.ExpiresAt())

	// A hold made with its whole life (HOLD_MAX_LIFETIME = HOLD_TTL) can
	// never be extended.
	whole := mustHold(t, store, s.ID(), "alice", time.Minute, 3)
	if _, err := extend(t, store, whole, "alice", time.Minute, time.Minute); !errors.Is(err, reservation.ErrHoldLifetimeExceeded) {
		t.Errorf("extending a hold made with its whole life = %v, want ErrHoldLifetimeExceeded", err)
	}
	expectMovedTogether(t, pool, whole, whole.ExpiresAt())
}

// A hold that already expires later than now + TTL (extended by a request
// whose transaction began later) is answered as it is, never shortened.
func TestExtendHoldNeverShortensAHold(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	s := mustSchedule(t, store, 10)
	h := mustHold(t, store, s.ID(), "alice", 10*time.Minute, 1)

	got, err := extend(t, store, h, "alice", time.Minute, 30*time.Minute)
	if err != nil || !got.ExpiresAt().Equal(h.ExpiresAt()) || got.Status() != reservation.HoldActive {
		t.Fatalf("ExtendHold with a shorter TTL = %+v, %v; want the hold as it is (expiring at %s)", got, err, h.ExpiresAt())
	}
	expectMovedTogether(t, pool, h, h.ExpiresAt())
}

func TestExtendHoldRefusesEndedAndOthersHolds(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)

	expired := mustHold(t, store, s.ID(), "alice", time.Millisecond, 1)
	released := mustHold(t, store, s.ID(), "alice", time.Minute, 2)
	if _, err := store.ReleaseHold(ctx, released.ID(), "alice"); err != nil {
		t.Fatal(err)
	}
	confirmed := mustHold(t, store, s.ID(), "alice", time.Minute, 3)
	if _, err := store.ConfirmHold(ctx, confirmed.ID(), "alice"); err != nil {
		t.Fatal(err)
	}
	live := mustHold(t, store, s.ID(), "alice", time.Minute, 4)
	time.Sleep(50 * time.Millisecond) // the 1 ms hold has long expired

	for _, tt := range []struct {
		name string
		h    reservation.Hold
		user string
		want error
	}{
		{"expired", expired, "alice", reservation.ErrHoldExpired},
		{"released", released, "alice", reservation.ErrHoldReleased},
		{"confirmed", confirmed, "alice", reservation.ErrHoldConfirmed},
		{"someone else's", live, "bob", reservation.ErrHoldNotFound},
		{"unknown", reservation.RestoreHold(uuid.New(), s.ID(), []int{5}, "alice", time.Now(), time.Now(), reservation.HoldActive),
			"alice", reservation.ErrHoldNotFound},
	} {
		if _, err := extend(t, store, tt.h, tt.user, 10*time.Minute, 30*time.Minute); !errors.Is(err, tt.want) {
			t.Errorf("extending %s hold = %v, want %v", tt.name, err, tt.want)
		}
	}
	for _, h := range []reservation.Hold{expired, released, confirmed, live} {
		if expires, _ := holdRow(t, pool, h.ID()); !expires.Equal(h.ExpiresAt()) {
			t.Errorf("a refused extension moved hold %s to %s (was %s)", h.ID(), expires, h.ExpiresAt())
		}
	}
	if got, _ := store.Hold(ctx, expired.ID()); got.Status() != reservation.HoldExpired {
		t.Errorf("expired hold after a refused extension: %s", got.Status())
	}
	// The expired hold's seat stays free for anyone.
	mustReserve(t, store, s.ID(), 1, "carol")
}

// A hold whose claim is gone (dropped, or taken over, by a writer whose
// clock found it expired) is not extended: nothing changes, and the hold
// runs out as it would have.
func TestExtendHoldWithALostClaimChangesNothing(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	h := mustHold(t, store, s.ID(), "alice", time.Minute, 1, 2)
	if _, err := pool.Exec(ctx, `DELETE FROM seat_claims WHERE hold_id = $1 AND seat_id = 2`, h.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := extend(t, store, h, "alice", 10*time.Minute, 30*time.Minute); !errors.Is(err, reservation.ErrHoldExpired) {
		t.Fatalf("extending a hold that lost a claim = %v, want ErrHoldExpired", err)
	}
	expires, claims := holdRow(t, pool, h.ID())
	if !expires.Equal(h.ExpiresAt()) || len(claims) != 1 || !claims[0].Equal(h.ExpiresAt()) {
		t.Errorf("after the refusal: hold expires at %s, claims %v; want both as they were (%s)", expires, claims, h.ExpiresAt())
	}
}

// blockHold locks a hold's row in a transaction of its own, as a confirm
// or a release in flight would, until the returned function is called.
func blockHold(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) (unblock func()) {
	t.Helper()
	ctx := testContext(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM holds WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	done := false
	unblock = func() {
		if !done {
			done = true
			_ = tx.Rollback(context.Background())
		}
	}
	t.Cleanup(unblock)
	return unblock
}

// waitingSince waits until a transaction of the database waits for a row
// lock, and returns when that transaction began (its now()).
func waitingSince(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	ctx := testContext(t)
	for {
		var began time.Time
		err := pool.QueryRow(ctx, `
			SELECT xact_start FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&began)
		if err == nil {
			return began
		}
		if ctx.Err() != nil {
			t.Fatal("no transaction ever waited for the lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An extension whose transaction began while the hold was active wins,
// however late it gets to the claims: the clean-up that listed them as
// expired in the meantime finds them extended and drops nothing.
func TestExtensionThatBeganInTimeWinsOverTheCleanUp(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	const ttl = 3 * time.Second // margin for the extension to begin before the hold expires
	h := mustHold(t, store, s.ID(), "alice", ttl, 1, 2)
	unblock := blockHold(t, pool, h.ID())

	result := make(chan error, 1)
	var extended reservation.Hold
	go func() {
		var err error
		extended, err = store.ExtendHold(ctx, reservation.HoldExtension{ID: h.ID(), UserID: "alice", TTL: time.Minute, MaxLifetime: time.Hour})
		result <- err
	}()
	if began := waitingSince(t, pool); !began.Before(h.ExpiresAt()) {
		t.Fatalf("the extension began at %s, after the hold expired (%s): the test proves nothing", began, h.ExpiresAt())
	}
	time.Sleep(time.Until(h.ExpiresAt()) + 500*time.Millisecond)
	listed, err := store.ExpiredClaims(ctx, 100)
	if err != nil || len(listed) != 2 {
		t.Fatalf("ExpiredClaims = %v, %v; want the hold's 2 seats", listed, err)
	}
	unblock()
	if err := <-result; err != nil {
		t.Fatalf("ExtendHold that began in time = %v, want it extended", err)
	}
	for _, seat := range listed {
		if freed, err := store.DropExpiredClaim(ctx, seat); err != nil || freed {
			t.Errorf("DropExpiredClaim(seat %d) after the extension = %v, %v; want nothing dropped", seat.SeatID, freed, err)
		}
	}
	expectMovedTogether(t, pool, h, extended.ExpiresAt())
	if got, err := store.Hold(ctx, h.ID()); err != nil || got.Status() != reservation.HoldActive {
		t.Errorf("hold after the extension won = %+v, %v; want active", got, err)
	}
}

// An extension that began in time but reached the claims after the
// clean-up dropped them is refused, and changes nothing: the hold does not
// come back to life without its seats.
func TestExtensionThatLostItsClaimsToTheCleanUpIsRefused(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	const ttl = 3 * time.Second
	h := mustHold(t, store, s.ID(), "alice", ttl, 1, 2)
	unblock := blockHold(t, pool, h.ID())

	result := make(chan error, 1)
	go func() {
		_, err := store.ExtendHold(ctx, reservation.HoldExtension{ID: h.ID(), UserID: "alice", TTL: time.Minute, MaxLifetime: time.Hour})
		result <- err
	}()
	if began := waitingSince(t, pool); !began.Before(h.ExpiresAt()) {
		t.Fatalf("the extension began at %s, after the hold expired (%s): the test proves nothing", began, h.ExpiresAt())
	}
	time.Sleep(time.Until(h.ExpiresAt()) + 500*time.Millisecond)
	if freed, err := store.DropExpiredClaim(ctx, reservation.SeatRef{ScheduleID: s.ID(), SeatID: 2}); err != nil || !freed {
		t.Fatalf("DropExpiredClaim(seat 2) = %v, %v; want it dropped", freed, err)
	}
	unblock()
	if err := <-result; !errors.Is(err, reservation.ErrHoldExpired) {
		t.Fatalf("ExtendHold that lost a claim = %v, want ErrHoldExpired", err)
	}
	expires, claims := holdRow(t, pool, h.ID())
	if !expires.Equal(h.ExpiresAt()) || len(claims) != 1 || !claims[0].Equal(h.ExpiresAt()) {
		t.Errorf("after the refusal: hold expires at %s, claims %v; want both as they were (%s)", expires, claims, h.ExpiresAt())
	}
	if got, _ := store.Hold(ctx, h.ID()); got.Status() != reservation.HoldExpired {
		t.Errorf("hold after the refused extension: %s, want expired", got.Status())
	}
}
