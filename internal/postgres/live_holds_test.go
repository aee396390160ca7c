package postgres_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// cappedHold stores a hold of seats for user, who may have max live holds.
func cappedHold(ctx context.Context, store *postgres.Store, scheduleID int64, user string, max int, ttl time.Duration, seats ...int) (reservation.Hold, error) {
	fences := make([]int64, len(seats))
	for i := range fences {
		fences[i] = nextFence()
	}
	return store.InsertHold(ctx, reservation.NewHold{
		ScheduleID: scheduleID, SeatIDs: slices.Sorted(slices.Values(seats)), Fences: fences, UserID: user, TTL: ttl, MaxLive: max,
	})
}

// userHoldRows counts user's holds and their claims of the schedule.
func userHoldRows(t *testing.T, pool *pgxpool.Pool, scheduleID int64, user string) (holds, claims int) {
	t.Helper()
	holds = queryCount(t, pool, `SELECT count(*) FROM holds WHERE schedule_id = $1 AND user_id = $2`, scheduleID, user)
	claims = queryCount(t, pool, `SELECT count(*) FROM seat_claims c JOIN holds h ON h.id = c.hold_id
		WHERE c.schedule_id = $1 AND h.user_id = $2`, scheduleID, user)
	return holds, claims
}

// Many holds of one user at once: exactly the cap's worth are made, each
// of the others is refused with ErrTooManyHolds and leaves nothing, and
// another user is not affected.
func TestConcurrentHoldsOfOneUserStopAtTheCap(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 100)
	const (
		max   = 5
		tries = 48
	)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		made     int
		tooMany  int
		otherErr []error
	)
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cappedHold(ctx, store, s.ID(), "collector", max, time.Minute, 2*i+1, 2*i+2)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case errors.Is(err, reservation.ErrTooManyHolds):
				tooMany++
			default:
				otherErr = append(otherErr, err)
			}
		}()
	}
	wg.Wait()
	if made != max || tooMany != tries-max || len(otherErr) > 0 {
		t.Fatalf("%d holds at once with a cap of %d: %d made, %d too many, other errors %v", tries, max, made, tooMany, otherErr)
	}
	if holds, claims := userHoldRows(t, pool, s.ID(), "collector"); holds != max || claims != 2*max {
		t.Errorf("stored: %d holds with %d claims, want %d with %d", holds, claims, max, 2*max)
	}
	if _, err := cappedHold(ctx, store, s.ID(), "someone-else", max, time.Minute, 99); err != nil {
		t.Errorf("another user's hold: %v", err)
	}
}

// A hold stops counting once it is released, confirmed or expired.
func TestEndedHoldsMakeRoomUnderTheCap(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 20)
	const max = 2
	mustCapped := func(ttl time.Duration, seat int) reservation.Hold {
		t.Helper()
		h, err := cappedHold(ctx, store, s.ID(), "dora", max, ttl, seat)
		if err != nil {
			t.Fatalf("hold of seat %d: %v", seat, err)
		}
		return h
	}
	expectFull := func(when string, seat int) {
		t.Helper()
		if _, err := cappedHold(ctx, store, s.ID(), "dora", max, time.Minute, seat); !errors.Is(err, reservation.ErrTooManyHolds) {
			t.Fatalf("%s: a third hold: %v, want ErrTooManyHolds", when, err)
		}
	}

	released := mustCapped(time.Minute, 1)
	confirmed := mustCapped(time.Minute, 2)
	expectFull("two live holds", 3)
	if _, err := store.ReleaseHold(ctx, released.ID(), "dora"); err != nil {
		t.Fatal(err)
	}
	mustCapped(time.Minute, 4)
	expectFull("after a release and a new hold", 5)
	if _, err := store.ConfirmHold(ctx, confirmed.ID(), "dora"); err != nil {
		t.Fatal(err)
	}
	// The store's clock ends this hold a millisecond after it began;
	// the next transaction begins well after.
	mustCapped(time.Millisecond, 6)
	time.Sleep(50 * time.Millisecond)
	mustCapped(time.Minute, 7)
	expectFull("after a confirmation, an expiry and a new hold", 8)
}

// An extended hold counts until its new expiry, even when its entry had
// been dropped as expired (by a hold whose clock ran ahead of the
// extension's) or had run out in the user's row before the extension.
func TestExtendedHoldKeepsCountingUnderTheCap(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 20)
	for k, c := range []struct {
		name, stale string
	}{
		{"entry dropped", `UPDATE live_holds_by_user SET holds = holds - $2::text WHERE user_id = $1`},
		{"entry run out", `UPDATE live_holds_by_user SET holds = holds || jsonb_build_object($2::text, now() - interval '1 second') WHERE user_id = $1`},
	} {
		user := "ext-" + c.name
		h, err := cappedHold(ctx, store, s.ID(), user, 1, time.Minute, k+1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pool.Exec(ctx, c.stale, user, h.ID()); err != nil {
			t.Fatal(err)
		}
		if _, err := extend(t, store, h, user, time.Hour, 2*time.Hour); err != nil {
			t.Fatalf("%s: extend: %v", c.name, err)
		}
		if _, err := cappedHold(ctx, store, s.ID(), user, 1, time.Minute, k+10); !errors.Is(err, reservation.ErrTooManyHolds) {
			t.Errorf("%s: a second hold beside the extended one: %v, want ErrTooManyHolds", c.name, err)
		}
	}
}

// lockUserRow holds user's row of live holds locked until the test ends
// (or the returned function runs), as a transaction of the same user
// would.
func lockUserRow(t *testing.T, pool *pgxpool.Pool, user string) (unlock func()) {
	t.Helper()
	ctx := testContext(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM live_holds_by_user WHERE user_id = $1 FOR UPDATE`, user); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	unlock = func() { once.Do(func() { _ = tx.Rollback(ctx) }) }
	t.Cleanup(unlock)
	return unlock
}

// A hold, a release, a confirmation or an extension that cannot write the
// user's count of live holds fails whole: nothing of it stays.
func TestHoldChangesWithoutTheirCountChangeNothing(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 20)
	toRelease := mustHold(t, store, s.ID(), "erin", time.Minute, 1)
	toConfirm := mustHold(t, store, s.ID(), "erin", time.Minute, 2)
	toExtend := mustHold(t, store, s.ID(), "erin", time.Minute, 3)
	before, _ := holdRow(t, pool, toExtend.ID())

	unlock := lockUserRow(t, pool, "erin")
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	if _, err := cappedHold(short(), store, s.ID(), "erin", 10, time.Minute, 4); err == nil {
		t.Error("a hold whose count waited past its deadline was made")
	}
	if _, err := store.ReleaseHold(short(), toRelease.ID(), "erin"); err == nil {
		t.Error("a release whose count waited past its deadline succeeded")
	}
	if _, err := store.ConfirmHold(short(), toConfirm.ID(), "erin"); err == nil {
		t.Error("a confirmation whose count waited past its deadline succeeded")
	}
	if _, err := store.ExtendHold(short(), reservation.HoldExtension{ID: toExtend.ID(), UserID: "erin", TTL: time.Hour, MaxLifetime: 2 * time.Hour}); err == nil {
		t.Error("an extension whose count waited past its deadline succeeded")
	}
	unlock()

	if holds, claims := userHoldRows(t, pool, s.ID(), "erin"); holds != 3 || claims != 3 {
		t.Errorf("stored: %d holds with %d claims, want the 3 first with 3", holds, claims)
	}
	for _, h := range []reservation.Hold{toRelease, toConfirm} {
		if got, err := store.Hold(ctx, h.ID()); err != nil || got.Status() != reservation.HoldActive {
			t.Errorf("hold of seats %v: %v, %v; want it still active", h.SeatIDs(), got.Status(), err)
		}
	}
	if after, _ := holdRow(t, pool, toExtend.ID()); !after.Equal(before) {
		t.Errorf("the extension moved the hold to %s, want it at %s", after, before)
	}
	if n := countReservations(t, pool, s.ID()); n != 0 {
		t.Errorf("%d reservations, want none", n)
	}
}
