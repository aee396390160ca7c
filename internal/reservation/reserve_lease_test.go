package reservation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// newLeaseTest returns a repository with the test schedule, a locker whose
// next lease has fence nextFence, and a service on both.
func newLeaseTest(nextFence int64) (*fakeRepo, *fakeLocker, *reservation.Service) {
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	locker := &fakeLocker{j: j, lastFence: nextFence - 1}
	return repo, locker, reservation.NewService(repo, locker, reservation.Config{LockTTL: lockTTL}, nil)
}

// The insert carries the lease's fencing token, so that PostgreSQL can
// refuse a holder that a newer one has overtaken.
func TestReservePassesLeaseFenceToInsert(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(42)

	if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"}); err != nil {
		t.Fatalf("Reserve: %v", err)
	}

	if fence := locker.lease(0).Fence(); fence != 42 {
		t.Fatalf("fake lease fence = %d, want 42", fence)
	}
	want := reservation.NewReservation{ScheduleID: scheduleID, SeatID: 3, UserID: "alice", Fence: 42}
	if got := repo.insertsSeen(); len(got) != 1 || got[0] != want {
		t.Errorf("InsertReservation got %+v, want exactly [%+v]", got, want)
	}
	if got := repo.fence(scheduleID, 3); got != 42 {
		t.Errorf("seat fence after booking = %d, want the lease's 42", got)
	}
}

// Each acquisition's own fence is used: a second booking of another seat
// carries the second lease's fence, not the first one's.
func TestReserveUsesEachLeasesFence(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(7)
	for _, seat := range []int{1, 2} {
		if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: seat, UserID: "alice"}); err != nil {
			t.Fatalf("Reserve seat %d: %v", seat, err)
		}
	}
	got := repo.insertsSeen()
	if len(got) != 2 || got[0].Fence != locker.lease(0).Fence() || got[1].Fence != locker.lease(1).Fence() || got[0].Fence == got[1].Fence {
		t.Errorf("inserts = %+v, want the fences of leases 7 and 8 in order", got)
	}
}

// The insert runs under the caller's context (its values, and its deadline
// bounded to a few seconds), which the lease's loss does not end: the fence decides whether a holder
// whose lease ran out may still write. The schedule lookup happens before
// there is a lease.
func TestReserveContexts(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(1)
	type callerKey struct{}
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), callerKey{}, "caller"), deadline)
	defer cancel()
	var insertErr error
	repo.after["InsertReservation"] = func() {
		insert := repo.contexts("InsertReservation")[0]
		locker.lastLease().lose()
		insertErr = insert.Err()
	}

	if _, err := svc.Reserve(ctx, reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"}); err != nil {
		t.Fatalf("Reserve: %v", err)
	}

	if insertErr != nil {
		t.Errorf("insert context after the lease was lost: %v, want it alive", insertErr)
	}
	ctxs := repo.contexts("InsertReservation")
	if len(ctxs) != 1 {
		t.Fatalf("InsertReservation called %d times, want once", len(ctxs))
	}
	// The caller's values (request id, trace) reach the store.
	if ctxs[0].Value(callerKey{}) != "caller" {
		t.Error("InsertReservation lost the caller's context values")
	}
	// The request's hour-long deadline is shortened to the bound on a
	// write under the lock: a silent store is found out in seconds.
	if got, ok := ctxs[0].Deadline(); !ok || !got.Before(deadline) || got.After(time.Now().Add(3*time.Second)) {
		t.Errorf("InsertReservation deadline = %v (%v), want within seconds, before the request's %v", got, ok, deadline)
	}
	if ctxs := repo.contexts("Schedule"); len(ctxs) != 1 || ctxs[0].Value(leaseCtxKey{}) != nil {
		t.Errorf("Schedule contexts = %v, want one call before the lock was taken", ctxs)
	}
	// Release came after the loss, which stays the lease's cause.
	if cause := context.Cause(locker.lease(0).Context()); !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("lease context cause after Reserve = %v, want the ErrLeaseLost it ended with", cause)
	}
	if got := locker.releases(); got != 1 {
		t.Errorf("releases = %d, want 1", got)
	}
}

// ReserveCommand.Wait reaches the lock port; the TTL is the configured one.
func TestReservePassesWaitToLock(t *testing.T) {
	t.Parallel()
	for _, wait := range []time.Duration{0, 250 * time.Millisecond, 3 * time.Second} {
		t.Run(wait.String(), func(t *testing.T) {
			t.Parallel()
			_, locker, svc := newLeaseTest(1)

			_, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice", Wait: wait})
			if err != nil {
				t.Fatalf("Reserve: %v", err)
			}
			want := lock.Options{TTL: lockTTL, Wait: wait}
			if got := locker.options(); len(got) != 1 || got[0] != want {
				t.Errorf("Acquire options = %+v, want [%+v]", got, want)
			}
		})
	}
}

// Wait also reaches the lock when the lock stays held: the use case answers
// with the holder's remaining TTL, whatever it waited.
func TestReserveWaitThenHeld(t *testing.T) {
	t.Parallel()
	_, locker, svc := newLeaseTest(1)
	locker.acquireErr = &lock.HeldError{Key: "k", Remaining: 800 * time.Millisecond}

	_, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice", Wait: 2 * time.Second})

	var locked *reservation.UnavailableSeat
	if !errors.As(err, &locked) || locked.RetryAfter != 800*time.Millisecond {
		t.Fatalf("Reserve error = %v, want *UnavailableSeat retrying after 800ms", err)
	}
	if got := locker.options(); len(got) != 1 || got[0].Wait != 2*time.Second {
		t.Errorf("Acquire options = %+v, want Wait 2s", got)
	}
}

// A repository refusing the fence means a newer holder owns the seat: the
// caller is told the seat is locked, the stale-fence cause is kept, nothing
// is stored and the lease is still released exactly once.
func TestReserveStaleFenceIsSeatLocked(t *testing.T) {
	t.Parallel()
	repo, locker, svc := newLeaseTest(5)
	repo.setFence(scheduleID, 3, 6) // the successor (fence 6) already wrote

	r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

	wantLeaseError(reservation.ErrStaleFence)(t, r.Reservation, err)
	if errors.Is(err, reservation.ErrUnavailable) {
		t.Errorf("Reserve error = %v: a stale fence is not an outage", err)
	}
	if got := locker.releases(); got != 1 {
		t.Errorf("releases = %d, want 1", got)
	}
	if got := repo.fence(scheduleID, 3); got != 6 {
		t.Errorf("seat fence = %d, want the successor's 6 untouched", got)
	}
	if n := repo.count(); n != 0 {
		t.Errorf("stored reservations = %d, want 0", n)
	}
}

// A plain store failure under a healthy lease is passed on unchanged.
func TestReservePlainErrorWithHealthyLease(t *testing.T) {
	t.Parallel()
	plain := errors.New("postgres: insert reservation: something odd")
	repo, locker, svc := newLeaseTest(1)
	repo.fail["InsertReservation"] = plain

	_, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})

	if !errors.Is(err, plain) {
		t.Fatalf("Reserve error = %v, want it to wrap %v", err, plain)
	}
	var locked *reservation.UnavailableSeat
	if errors.As(err, &locked) || errors.Is(err, reservation.ErrSeatLocked) {
		t.Errorf("Reserve error = %v: a healthy lease's failure is not SeatLocked", err)
	}
	if got := locker.releases(); got != 1 {
		t.Errorf("releases = %d, want 1", got)
	}
}
