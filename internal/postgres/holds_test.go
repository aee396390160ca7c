package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// mustHold stores a hold of seats for user with fresh fences.
func mustHold(t *testing.T, store *postgres.Store, scheduleID int64, user string, ttl time.Duration, seats ...int) reservation.Hold {
	t.Helper()
	h, err := hold(t, store, scheduleID, user, ttl, seats...)
	if err != nil {
		t.Fatalf("InsertHold(%v): %v", seats, err)
	}
	return h
}

func hold(t *testing.T, store *postgres.Store, scheduleID int64, user string, ttl time.Duration, seats ...int) (reservation.Hold, error) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(seats))
	fences := make([]int64, len(sorted))
	for i := range fences {
		fences[i] = nextFence()
	}
	return store.InsertHold(testContext(t), reservation.NewHold{
		ScheduleID: scheduleID, SeatIDs: sorted, Fences: fences, UserID: user, TTL: ttl,
	})
}

// refusedSeats returns the seats of a *SeatsUnavailableError, or fails.
func refusedSeats(t *testing.T, err error) []reservation.UnavailableSeat {
	t.Helper()
	var refused *reservation.SeatsUnavailableError
	if !errors.As(err, &refused) {
		t.Fatalf("error = %v, want a *SeatsUnavailableError", err)
	}
	return refused.Seats
}

func TestInsertHoldIsAllOrNothing(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	mustReserve(t, store, s.ID(), 5, "carol")

	first := mustHold(t, store, s.ID(), "alice", time.Minute, 2, 1)
	if first.Status() != reservation.HoldActive || !slices.Equal(first.SeatIDs(), []int{1, 2}) || first.UserID() != "alice" {
		t.Fatalf("hold = %+v, want active on seats 1 and 2 for alice", first)
	}
	if left := time.Until(first.ExpiresAt()); left < 50*time.Second || left > 70*time.Second {
		t.Errorf("hold expires in %s, want about a minute", left)
	}

	_, err := hold(t, store, s.ID(), "bob", time.Minute, 2, 3, 5)
	got := refusedSeats(t, err)
	if len(got) != 2 || got[0].SeatID != 2 || got[0].Reason != reservation.ReasonHeld ||
		got[1].SeatID != 5 || got[1].Reason != reservation.ReasonTaken {
		t.Fatalf("refused seats = %+v, want 2 held and 5 taken", got)
	}
	if got[0].RetryAfter < 50*time.Second || got[0].RetryAfter > time.Minute {
		t.Errorf("held seat's RetryAfter = %s, want the first hold's time left", got[0].RetryAfter)
	}
	// Nothing of the refused hold stayed: seat 3 is free, and no row.
	var holds, claims int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM holds WHERE schedule_id = $1`, s.ID()).Scan(&holds); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM seat_claims WHERE schedule_id = $1 AND hold_id IS NOT NULL`, s.ID()).Scan(&claims); err != nil {
		t.Fatal(err)
	}
	if holds != 1 || claims != 2 {
		t.Errorf("after a refused hold: %d holds and %d claims, want 1 and 2", holds, claims)
	}
	mustHold(t, store, s.ID(), "bob", time.Minute, 3)

	if _, err := hold(t, store, s.ID()+1000, "bob", time.Minute, 1); !errors.Is(err, reservation.ErrScheduleNotFound) {
		t.Errorf("hold on an unknown schedule: %v, want ErrScheduleNotFound", err)
	}
}

// An expired hold frees its seats when read, before any clean-up ran.
func TestExpiredHoldFreesItsSeatsAtOnce(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	old := mustHold(t, store, s.ID(), "alice", 50*time.Millisecond, 1, 2)
	time.Sleep(100 * time.Millisecond)

	h, err := store.Hold(ctx, old.ID())
	if err != nil || h.Status() != reservation.HoldExpired {
		t.Fatalf("Hold = %+v, %v; want expired", h, err)
	}
	if _, err := store.ConfirmHold(ctx, old.ID(), "alice"); !errors.Is(err, reservation.ErrHoldExpired) {
		t.Errorf("ConfirmHold of an expired hold = %v, want ErrHoldExpired", err)
	}
	mustHold(t, store, s.ID(), "bob", time.Minute, 2)
	mustReserve(t, store, s.ID(), 1, "carol")
	if freed, err := store.ReleaseHold(ctx, old.ID(), "alice"); err != nil || len(freed) != 0 {
		t.Errorf("ReleaseHold of an expired hold = %v, %v; want nothing freed", freed, err)
	}
	if h, _ := store.Hold(ctx, old.ID()); h.Status() != reservation.HoldExpired {
		t.Errorf("after releasing an expired hold its status is %s, want expired", h.Status())
	}
	// Releasing the expired hold did not free bob's claim on seat 2.
	if _, err := insert(ctx, store, s.ID(), 2, "dave", nextFence()); !errors.Is(err, reservation.ErrSeatHeld) {
		t.Errorf("booking seat 2 after the old hold's release = %v, want ErrSeatHeld (bob holds it)", err)
	}
}

func TestBookingAHeldSeatIsRefusedUntilReleased(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	h := mustHold(t, store, s.ID(), "alice", 30*time.Second, 4)

	_, err := insert(ctx, store, s.ID(), 4, "bob", nextFence())
	var held *reservation.UnavailableSeat
	if !errors.As(err, &held) {
		t.Fatalf("booking a held seat = %v, want *UnavailableSeat", err)
	}
	if held.RetryAfter <= 25*time.Second || held.RetryAfter > 30*time.Second {
		t.Errorf("RetryAfter = %s, want the hold's time left (about 30s)", held.RetryAfter)
	}
	// The owner books through confirm, not around the hold.
	if _, err := insert(ctx, store, s.ID(), 4, "alice", nextFence()); !errors.Is(err, reservation.ErrSeatHeld) {
		t.Errorf("owner booking her own held seat = %v, want ErrSeatHeld", err)
	}
	if _, err := store.ReleaseHold(ctx, h.ID(), "bob"); !errors.Is(err, reservation.ErrHoldNotFound) {
		t.Errorf("ReleaseHold by another user = %v, want ErrHoldNotFound", err)
	}
	if freed, err := store.ReleaseHold(ctx, h.ID(), "alice"); err != nil || !slices.Equal(freed, []int{4}) {
		t.Fatalf("ReleaseHold = %v, %v; want seat 4 freed", freed, err)
	}
	if freed, err := store.ReleaseHold(ctx, h.ID(), "alice"); err != nil || len(freed) != 0 {
		t.Errorf("ReleaseHold again = %v, %v; want nothing freed", freed, err)
	}
	if got, _ := store.Hold(ctx, h.ID()); got.Status() != reservation.HoldReleased {
		t.Errorf("status after release = %s, want released", got.Status())
	}
	if _, err := store.ConfirmHold(ctx, h.ID(), "alice"); !errors.Is(err, reservation.ErrHoldReleased) {
		t.Errorf("ConfirmHold after release = %v, want ErrHoldReleased", err)
	}
	mustReserve(t, store, s.ID(), 4, "bob")
}

func TestConfirmHoldBooksEverySeatOnce(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 20)
	h := mustHold(t, store, s.ID(), "alice", time.Minute, 12, 3, 10)

	if _, err := store.ConfirmHold(ctx, h.ID(), "bob"); !errors.Is(err, reservation.ErrHoldNotFound) {
		t.Errorf("ConfirmHold by another user = %v, want ErrHoldNotFound", err)
	}
	if _, err := store.ConfirmHold(ctx, uuid.New(), "alice"); !errors.Is(err, reservation.ErrHoldNotFound) {
		t.Errorf("ConfirmHold of an unknown id = %v, want ErrHoldNotFound", err)
	}
	first, err := store.ConfirmHold(ctx, h.ID(), "alice")
	if err != nil {
		t.Fatalf("ConfirmHold: %v", err)
	}
	var seats []int
	for _, r := range first {
		seats = append(seats, r.SeatID())
		if r.UserID() != "alice" || r.ScheduleID() != s.ID() || r.Cancelled() {
			t.Errorf("reservation %+v, want alice's, active, on schedule %d", r, s.ID())
		}
	}
	if !slices.Equal(seats, []int{3, 10, 12}) {
		t.Fatalf("confirmed seats %v, want [3 10 12]", seats)
	}
	again, err := store.ConfirmHold(ctx, h.ID(), "alice")
	if err != nil || !slices.Equal(again, first) {
		t.Errorf("ConfirmHold again = %v, %v; want the same reservations %v", again, err, first)
	}
	if got, _ := store.Hold(ctx, h.ID()); got.Status() != reservation.HoldConfirmed {
		t.Errorf("status after confirm = %s, want confirmed", got.Status())
	}
	if _, err := store.ReleaseHold(ctx, h.ID(), "alice"); !errors.Is(err, reservation.ErrHoldConfirmed) {
		t.Errorf("ReleaseHold of a confirmed hold = %v, want ErrHoldConfirmed", err)
	}
	if _, err := insert(ctx, store, s.ID(), 10, "bob", nextFence()); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Errorf("booking a confirmed seat = %v, want ErrSeatTaken", err)
	}
}

func TestCancelReservationFreesTheSeatOnce(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	r := mustReserve(t, store, s.ID(), 3, "alice")
	cancelFence := nextFence()

	got, err := store.CancelReservation(ctx, r.ID(), cancelFence)
	if err != nil || !got.Cancelled() || got.ID() != r.ID() {
		t.Fatalf("CancelReservation = %+v, %v; want it cancelled", got, err)
	}
	again, err := store.CancelReservation(ctx, r.ID(), nextFence())
	if err != nil || !again.CancelledAt().Equal(got.CancelledAt()) {
		t.Errorf("cancelling again = %+v, %v; want the first cancellation's time %s", again, err, got.CancelledAt())
	}
	if read, err := store.Reservation(ctx, r.ID()); err != nil || !read.Cancelled() {
		t.Errorf("Reservation after cancel = %+v, %v; want it, cancelled", read, err)
	}
	if _, err := store.SeatReservation(ctx, s.ID(), 3); !errors.Is(err, reservation.ErrReservationNotFound) {
		t.Errorf("SeatReservation of a cancelled seat = %v, want ErrReservationNotFound", err)
	}
	// A holder older than the cancellation may not book; a newer one may,
	// once.
	if _, err := insert(ctx, store, s.ID(), 3, "bob", cancelFence); !errors.Is(err, reservation.ErrStaleFence) {
		t.Errorf("booking with the cancellation's fence = %v, want ErrStaleFence", err)
	}
	mustReserve(t, store, s.ID(), 3, "bob")
	if _, err := insert(ctx, store, s.ID(), 3, "carol", nextFence()); !errors.Is(err, reservation.ErrSeatTaken) {
		t.Errorf("third booking = %v, want ErrSeatTaken", err)
	}
	if n := queryCount(t, pool, `SELECT count(*) FROM reservations WHERE schedule_id = $1 AND seat_id = 3`, s.ID()); n != 2 {
		t.Errorf("%d rows for the seat, want 2 (the cancelled one kept)", n)
	}
	if _, err := store.CancelReservation(ctx, uuid.New(), nextFence()); !errors.Is(err, reservation.ErrReservationNotFound) {
		t.Errorf("cancelling an unknown id = %v, want ErrReservationNotFound", err)
	}
}

func TestPurgeHoldsKeepsLiveOnes(t *testing.T) {
	t.Parallel()
	store, pool := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	live := mustHold(t, store, s.ID(), "alice", time.Minute, 1)
	expired := mustHold(t, store, s.ID(), "bob", time.Millisecond, 2)
	confirmed := mustHold(t, store, s.ID(), "carol", time.Minute, 3)
	if _, err := store.ConfirmHold(ctx, confirmed.ID(), "carol"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)

	// An expired hold whose hold.expired is not written yet is kept.
	if n, err := store.PurgeHolds(ctx, time.Now().Add(time.Second)); err != nil || n != 0 {
		t.Fatalf("PurgeHolds before the expiry is announced = %d, %v; want 0", n, err)
	}
	if _, err := store.AnnounceExpiredHolds(ctx, 1000); err != nil {
		t.Fatal(err)
	}
	// Ended holds are kept for a retention; purge with a cut-off after
	// the expired one ended.
	holds, err := store.PurgeHolds(ctx, time.Now().Add(time.Second))
	if err != nil {
		t.Fatalf("PurgeHolds: %v", err)
	}
	if holds < 1 {
		t.Errorf("PurgeHolds = %d holds; want at least the expired one", holds)
	}
	if _, err := store.Hold(ctx, expired.ID()); !errors.Is(err, reservation.ErrHoldNotFound) {
		t.Errorf("expired hold after purge: %v, want ErrHoldNotFound", err)
	}
	for _, h := range []reservation.Hold{live, confirmed} {
		if _, err := store.Hold(ctx, h.ID()); err != nil {
			t.Errorf("hold %s after purge: %v, want kept", h.ID(), err)
		}
	}
	if n := queryCount(t, pool, `SELECT count(*) FROM seat_claims WHERE hold_id = $1`, live.ID()); n != 1 {
		t.Errorf("live hold has %d claims after purge, want 1", n)
	}
	if n := queryCount(t, pool, `SELECT count(*) FROM seat_claims WHERE hold_id = $1`, expired.ID()); n != 0 {
		t.Errorf("purged hold has %d claims left, want none", n)
	}
}

// Expired claims are listed and dropped one by one; a dropped seat is
// freed. A seat booked after its hold expired lost the hold's claim to
// the booking's, and is not listed.
func TestExpiredClaims(t *testing.T) {
	t.Parallel()
	store, _ := newStore(t)
	ctx := testContext(t)
	s := mustSchedule(t, store, 10)
	mustHold(t, store, s.ID(), "alice", time.Millisecond, 1, 2)
	mustHold(t, store, s.ID(), "bob", time.Minute, 3)
	time.Sleep(10 * time.Millisecond)
	mustReserve(t, store, s.ID(), 2, "carol") // booked once the hold had expired

	listed, err := store.ExpiredClaims(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []int
	for _, seat := range listed {
		if seat.ScheduleID == s.ID() {
			mine = append(mine, seat.SeatID)
		}
	}
	slices.Sort(mine)
	if !slices.Equal(mine, []int{1}) {
		t.Fatalf("expired claims = %v, want seat 1 (seat 2 was booked since)", mine)
	}
	for seat, want := range map[int]bool{1: true, 2: false, 3: false} {
		freed, err := store.DropExpiredClaim(ctx, reservation.SeatRef{ScheduleID: s.ID(), SeatID: seat})
		if err != nil || freed != want {
			t.Errorf("DropExpiredClaim(seat %d) = %v, %v; want freed=%v", seat, freed, err, want)
		}
	}
	if got, _ := store.OccupiedSeats(ctx, s.ID()); len(got) != 2 || got[0].Status != reservation.SeatReserved || got[1].Status != reservation.SeatHeld {
		t.Errorf("occupied after dropping = %v, want 2 reserved and 3 held", got)
	}
}
