package reservation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

// claimContext is a request's context with an idempotency claim, as the
// HTTP edge makes it.
func claimContext(id uuid.UUID, resumed bool) context.Context {
	return idempotency.WithClaim(context.Background(),
		idempotency.Claim{Key: idempotency.Key{UserID: "alice", Key: "k"}, ID: id, Resumed: resumed})
}

// A booking stores its request's claim with the reservation; a retry that
// resumes the claim gets that reservation back without a lock or a write,
// marked recovered; a resumed claim that booked nothing books afresh.
func TestReserveWithIdempotencyClaim(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{LockTTL: lockTTL}, nil)
	claim := uuid.New()
	cmd := reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "alice", Claim: claim}

	ctx := claimContext(claim, false)
	first, err := svc.Reserve(ctx, cmd)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if seen := repo.insertsSeen(); len(seen) != 1 || seen[0].Claim != claim {
		t.Fatalf("inserts %+v, want one carrying the claim %v", seen, claim)
	}
	if first.Recovered || slices.Contains(j.list(), "ReservationByClaim") {
		t.Errorf("a fresh claim was looked up or marked recovered: %v", j.list())
	}

	// The answer was lost; the retry resumes the claim.
	before := len(j.list())
	cmd.Resumed = true
	ctx = claimContext(claim, true)
	again, err := svc.Reserve(ctx, cmd)
	if err != nil || again.Reservation != first.Reservation {
		t.Fatalf("resumed Reserve = %+v, %v; want %+v", again, err, first)
	}
	if calls := j.list()[before:]; !slices.Equal(calls, []string{"ReservationByClaim"}) {
		t.Errorf("resumed Reserve made calls %v, want only the look-up", calls)
	}
	if !again.Recovered {
		t.Error("the recovered answer is not marked recovered")
	}

	// A resumed claim under which nothing was booked books.
	other := uuid.New()
	ctx = claimContext(other, true)
	fresh, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 5, UserID: "alice", Claim: other, Resumed: true})
	if err != nil || fresh.SeatID() != 5 {
		t.Fatalf("resumed Reserve of a claim that booked nothing = %+v, %v; want seat 5 booked", fresh, err)
	}
	if seen := repo.insertsSeen(); len(seen) != 2 || seen[1].Claim != other {
		t.Errorf("inserts %+v, want the second carrying %v", seen, other)
	}
	if fresh.Recovered {
		t.Error("a fresh booking is marked recovered")
	}
}

// When the look-up of a resumed claim fails, nothing is locked or written:
// the outcome is still unknown, and the client is told so.
func TestReserveResumedClaimLookupFails(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	repo.fail["ReservationByClaim"] = fmt.Errorf("%w: connection reset", reservation.ErrUnavailable)
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{LockTTL: lockTTL}, nil)
	claim := uuid.New()
	_, err := svc.Reserve(claimContext(claim, true),
		reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "alice", Claim: claim, Resumed: true})
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("Reserve = %v, want ErrUnavailable", err)
	}
	if calls := j.list(); !slices.Equal(calls, []string{"ReservationByClaim"}) {
		t.Errorf("calls %v, want only the look-up", calls)
	}
}

// A request without a key pays nothing: no look-up, no claim stored.
func TestReserveWithoutClaimLooksNothingUp(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{LockTTL: lockTTL}, nil)
	if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "alice", Resumed: true}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(j.list(), "ReservationByClaim") || repo.insertsSeen()[0].Claim != uuid.Nil {
		t.Errorf("calls %v, inserts %+v: want no claim anywhere", j.list(), repo.insertsSeen())
	}
}

// A hold stores its request's claim; a retry that resumes the claim gets
// that hold back without a lock or a write, marked recovered.
func TestHoldWithIdempotencyClaim(t *testing.T) {
	t.Parallel()
	repo, locker := &fakeHoldRepo{}, &fakeMultiLocker{}
	svc := reservation.NewService(repo, locker, reservation.Config{HoldTTL: 3 * time.Minute}, nil)
	claim := uuid.New()
	cmd := reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1, 2}, UserID: "alice", Claim: claim}

	first, err := svc.Hold(claimContext(claim, false), cmd)
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if len(repo.inserted) != 1 || repo.inserted[0].Claim != claim || repo.claimReads != 0 {
		t.Fatalf("inserted %+v after %d claim reads, want one hold carrying %v and no read", repo.inserted, repo.claimReads, claim)
	}

	cmd.Resumed = true
	ctx := claimContext(claim, true)
	again, err := svc.Hold(ctx, cmd)
	if err != nil || again.ID() != first.ID() {
		t.Fatalf("resumed Hold = %v, %v; want %v", again.ID(), err, first.ID())
	}
	if len(repo.inserted) != 1 || len(locker.leases) != 1 || !again.Recovered || first.Recovered {
		t.Errorf("resumed Hold: %d inserts, %d leases, recovered %v (first %v); want the hold found, nothing locked or written",
			len(repo.inserted), len(locker.leases), again.Recovered, first.Recovered)
	}

	other := uuid.New()
	ctx = claimContext(other, true)
	fresh, err := svc.Hold(ctx, reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{3}, UserID: "alice", Claim: other, Resumed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(repo.inserted) != 2 || repo.inserted[1].Claim != other || fresh.Recovered {
		t.Errorf("a resumed claim that held nothing: inserted %+v, recovered %v; want a fresh hold", repo.inserted, fresh.Recovered)
	}
}
