package reservation_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

const (
	scheduleID int64 = 7
	seatCount        = 10
	lockTTL          = 7 * time.Second
)

func acquired(seat int) string {
	return fmt.Sprintf("Acquire lock:{schedule:%d}:seat:%d %s", scheduleID, seat, lockTTL)
}

func released(seat int) string {
	return fmt.Sprintf("Release lock:{schedule:%d}:seat:%d", scheduleID, seat)
}

// sealed is the journal's line of a seal of seat with owner's note.
func sealed(seat int, owner string) string {
	return fmt.Sprintf("Seal lock:{schedule:%d}:seat:%d note %s", scheduleID, seat, reservation.OwnerNote(owner))
}

// wantBooked checks a successful Reserve of seat for alice.
func wantBooked(seat int) func(*testing.T, reservation.Reservation, error) {
	return func(t *testing.T, r reservation.Reservation, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("Reserve: unexpected error %v", err)
		}
		if r.ID() == uuid.Nil || r.ScheduleID() != scheduleID || r.SeatID() != seat || r.UserID() != "alice" {
			t.Errorf("Reserve = {id %v schedule %d seat %d user %q}, want a stored reservation of schedule %d seat %d for alice",
				r.ID(), r.ScheduleID(), r.SeatID(), r.UserID(), scheduleID, seat)
		}
	}
}

// wantErr checks that err matches target and none of notTargets.
func wantErr(target error, notTargets ...error) func(*testing.T, reservation.Reservation, error) {
	return func(t *testing.T, r reservation.Reservation, err error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Fatalf("Reserve error = %v, want errors.Is(err, %v)", err, target)
		}
		for _, not := range notTargets {
			if errors.Is(err, not) {
				t.Errorf("Reserve error = %v: must not match %v", err, not)
			}
		}
		if r != (reservation.Reservation{}) {
			t.Errorf("Reserve returned %+v with an error, want the zero Reservation", r)
		}
	}
}

// wantLeaseError checks the answer of a holder that lost its lock while it
// worked: a *UnavailableSeat telling the client to retry in a second, that
// still wraps the failure (cause) so logs say what happened.
func wantLeaseError(cause error) func(*testing.T, reservation.Reservation, error) {
	return func(t *testing.T, r reservation.Reservation, err error) {
		t.Helper()
		var locked *reservation.UnavailableSeat
		if !errors.As(err, &locked) {
			t.Fatalf("Reserve error = %v (%T), want a *UnavailableSeat", err, err)
		}
		if locked.RetryAfter != time.Second {
			t.Errorf("RetryAfter = %v, want 1s", locked.RetryAfter)
		}
		if !errors.Is(err, reservation.ErrSeatLocked) {
			t.Errorf("errors.Is(%v, ErrSeatLocked) = false", err)
		}
		if !errors.Is(err, cause) {
			t.Errorf("Reserve error = %v: want it to still wrap %v", err, cause)
		}
		if errors.Is(err, reservation.ErrSeatTaken) {
			t.Errorf("Reserve error = %v: a lost lock does not say the seat is taken", err)
		}
		if r != (reservation.Reservation{}) {
			t.Errorf("Reserve returned %+v with an error, want the zero Reservation", r)
		}
	}
}

func TestReserve(t *testing.T) {
	t.Parallel()
	var (
		seat       = 3
		cmd        = reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: seat, UserID: "alice"}
		allCalls   = []string{"Schedule", acquired(seat), "InsertReservation", released(seat)}
		settled    = lookedUp(seat) // an insert of unknown outcome, then the look-up
		heldErr    = fmt.Errorf("redislock: acquire: %w", &lock.HeldError{Key: "k", Remaining: 1500 * time.Millisecond})
		lockDown   = fmt.Errorf("redislock: acquire: %w: %w", lock.ErrUnavailable, io.EOF)
		releaseErr = fmt.Errorf("redislock: release: %w: %w", lock.ErrUnavailable, io.EOF)
	)
	withSeat := func(seat int) reservation.ReserveCommand { c := cmd; c.SeatID = seat; return c }

	tests := []struct {
		name  string
		cmd   reservation.ReserveCommand
		setup func(repo *fakeRepo, locker *fakeLocker, cancel context.CancelFunc)
		check func(*testing.T, reservation.Reservation, error)
		seal  bool // Config.SealBooked
		calls []string
		rows  int // reservations stored afterwards
	}{
		{
			name:  "books a free seat",
			cmd:   cmd,
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name:  "books the first seat",
			cmd:   withSeat(1),
			check: wantBooked(1),
			calls: []string{"Schedule", acquired(1), "InsertReservation", released(1)},
			rows:  1,
		},
		{
			name:  "books the last seat",
			cmd:   withSeat(seatCount),
			check: wantBooked(seatCount),
			calls: []string{"Schedule", acquired(seatCount), "InsertReservation", released(seatCount)},
			rows:  1,
		},
		{
			name: "user is required",
			cmd:  reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: seat},
			check: func(t *testing.T, _ reservation.Reservation, err error) {
				var invalid *reservation.InvalidError
				if !errors.As(err, &invalid) || invalid.Field != "userId" {
					t.Fatalf("Reserve error = %v, want *InvalidError on userId", err)
				}
			},
			calls: nil,
		},
		{
			name:  "unknown schedule takes no lock",
			cmd:   reservation.ReserveCommand{ScheduleID: scheduleID + 1, SeatID: seat, UserID: "alice"},
			check: wantErr(reservation.ErrScheduleNotFound, reservation.ErrUnavailable),
			calls: []string{"Schedule"},
		},
		{
			name:  "seat 0 takes no lock",
			cmd:   withSeat(0),
			check: wantErr(reservation.ErrSeatNotFound),
			calls: []string{"Schedule"},
		},
		{
			name:  "seat after the last takes no lock",
			cmd:   withSeat(seatCount + 1),
			check: wantErr(reservation.ErrSeatNotFound),
			calls: []string{"Schedule"},
		},
		{
			name:  "negative seat takes no lock",
			cmd:   withSeat(-1),
			check: wantErr(reservation.ErrSeatNotFound),
			calls: []string{"Schedule"},
		},
		{
			name:  "schedule lookup unavailable",
			cmd:   cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) { repo.fail["Schedule"] = errDBDown },
			check: wantErr(reservation.ErrUnavailable, reservation.ErrScheduleNotFound),
			calls: []string{"Schedule"},
		},
		{
			name:  "lock held by another request",
			cmd:   cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) { locker.acquireErr = heldErr },
			check: func(t *testing.T, _ reservation.Reservation, err error) {
				var locked *reservation.UnavailableSeat
				if !errors.As(err, &locked) {
					t.Fatalf("Reserve error = %v (%T), want *UnavailableSeat", err, err)
				}
				if locked.RetryAfter != 1500*time.Millisecond {
					t.Errorf("RetryAfter = %v, want the holder's remaining TTL 1.5s", locked.RetryAfter)
				}
				if !errors.Is(err, reservation.ErrSeatLocked) {
					t.Errorf("errors.Is(%v, ErrSeatLocked) = false", err)
				}
				if errors.Is(err, reservation.ErrUnavailable) || errors.Is(err, reservation.ErrSeatTaken) {
					t.Errorf("Reserve error = %v: a held lock is neither unavailable nor taken", err)
				}
			},
			calls: []string{"Schedule", acquired(seat)},
		},
		{
			name:  "lock store unavailable",
			cmd:   cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) { locker.acquireErr = lockDown },
			check: wantErr(reservation.ErrUnavailable, reservation.ErrSeatLocked),
			calls: []string{"Schedule", acquired(seat)},
		},
		{
			name:  "other lock failure is passed on",
			cmd:   cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) { locker.acquireErr = lock.ErrInvalidTTL },
			check: wantErr(lock.ErrInvalidTTL, reservation.ErrSeatLocked),
			calls: []string{"Schedule", acquired(seat)},
		},
		{
			name: "seat already reserved",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "bob")
			},
			check: wantErr(reservation.ErrSeatTaken),
			calls: []string{"Schedule", acquired(seat), "InsertReservation", released(seat)},
			rows:  1,
		},
		{
			name: "insert loses to the unique constraint",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				// A booking whose lease expired commits between our check
				// and our insert.
				repo.before["InsertReservation"] = func() { repo.addReservation(scheduleID, seat, "bob") }
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrSeatLocked),
			calls: allCalls,
			rows:  1,
		},
		{
			name:  "insert unavailable",
			cmd:   cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) { repo.fail["InsertReservation"] = errDBDown },
			check: wantErr(reservation.ErrUnavailable, reservation.ErrSeatTaken, reservation.ErrSeatLocked),
			calls: settled,
		},
		{
			name: "insert finds the schedule gone",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				repo.fail["InsertReservation"] = reservation.ErrScheduleNotFound
			},
			check: wantErr(reservation.ErrScheduleNotFound, reservation.ErrSeatLocked),
			calls: allCalls,
		},
		{
			name: "release reports the lease expired",
			cmd:  cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				locker.releaseErr = lock.ErrNotHeld
			},
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name: "release cannot reach the lock store",
			cmd:  cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				locker.releaseErr = releaseErr
			},
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name: "release failure keeps seat taken",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "bob")
				locker.releaseErr = lock.ErrNotHeld
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrUnavailable),
			calls: []string{"Schedule", acquired(seat), "InsertReservation", released(seat)},
			rows:  1,
		},
		{
			name: "release failure keeps unavailable",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.fail["InsertReservation"] = errDBDown
				locker.releaseErr = releaseErr
			},
			check: wantErr(reservation.ErrUnavailable),
			calls: settled,
		},
		{
			name: "context cancelled before the insert",
			cmd:  cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, cancel context.CancelFunc) {
				// The client gives up while the lock is being taken.
				// Not from the Schedule hook: the schedule cache runs
				// that query on a goroutine of its own, and a caller
				// whose context ends before the answer reaches it
				// rightly stops waiting (load schedule: context
				// canceled) without ever taking the lock.
				locker.onAcquire = func(*fakeLease) { cancel() }
			},
			// A client that gave up gets nothing written; the lock was
			// not lost: the caller's cancellation is passed on.
			check: wantErr(context.Canceled, reservation.ErrSeatLocked),
			calls: []string{"Schedule", acquired(seat), released(seat)},
		},
		{
			name: "context cancelled during insert",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, cancel context.CancelFunc) {
				repo.before["InsertReservation"] = cancel
			},
			// The insert may have committed: the seat is looked up, and
			// found free.
			check: wantErr(context.Canceled, reservation.ErrSeatLocked),
			calls: settled,
		},
		{
			name: "context cancelled after the insert committed",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, cancel context.CancelFunc) {
				repo.after["InsertReservation"] = cancel
			},
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name: "store refuses a stale fence",
			cmd:  cmd,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				// A newer holder of the seat's lock wrote while ours
				// was paused past its TTL.
				repo.setFence(scheduleID, seat, 1000)
			},
			check: wantLeaseError(reservation.ErrStaleFence),
			calls: allCalls,
		},
		{
			name: "store refuses a stale fence and the release fails",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.fail["InsertReservation"] = reservation.ErrStaleFence
				locker.releaseErr = lock.ErrNotHeld
			},
			check: wantLeaseError(reservation.ErrStaleFence),
			calls: allCalls,
		},
		{
			name: "lease lost before the insert",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				locker.onAcquire = func(l *fakeLease) { l.lose() }
			},
			// No newer holder wrote, so the fence lets it book.
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name: "sealed seat is taken, without a query",
			cmd:  cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				locker.acquireErr = &lock.SealedError{Key: "k"}
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrSeatLocked, reservation.ErrUnavailable),
			calls: []string{"Schedule", acquired(seat)},
		},
		{
			name:  "booking seals the seat",
			cmd:   cmd,
			seal:  true,
			check: wantBooked(seat),
			calls: []string{"Schedule", acquired(seat), "InsertReservation", sealed(seat, "alice")},
			rows:  1,
		},
		{
			name: "a seat found taken is sealed again, with its owner's note",
			cmd:  cmd,
			seal: true,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "bob")
			},
			check: wantErr(reservation.ErrSeatTaken),
			calls: []string{"Schedule", acquired(seat), "InsertReservation", sealed(seat, "bob")},
			rows:  1,
		},
		{
			name: "a seat found taken by an owner nobody named is released, not sealed",
			cmd:  cmd,
			seal: true,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				repo.fail["InsertReservation"] = reservation.ErrSeatTaken
			},
			check: wantErr(reservation.ErrSeatTaken),
			calls: allCalls,
		},
		{
			name: "a seat sealed with the user's note is their retry: their reservation, one look-up",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "alice")
				locker.acquireErr = &lock.SealedError{Key: "k", Note: reservation.OwnerNote("alice")}
			},
			check: wantBooked(seat),
			calls: []string{"Schedule", acquired(seat), "SeatReservation"},
			rows:  1,
		},
		{
			name: "a seat sealed with another user's note is taken, without a query",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "bob")
				locker.acquireErr = &lock.SealedError{Key: "k", Note: reservation.OwnerNote("bob")}
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrUnavailable),
			calls: []string{"Schedule", acquired(seat)},
			rows:  1,
		},
		{
			name: "the user's note on a seat booked by someone else (a digest collision) is taken",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "bob")
				locker.acquireErr = &lock.SealedError{Key: "k", Note: reservation.OwnerNote("alice")}
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrUnavailable),
			calls: []string{"Schedule", acquired(seat), "SeatReservation"},
			rows:  1,
		},
		{
			name: "the user's note on a seat without a reservation is taken",
			cmd:  cmd,
			setup: func(_ *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				locker.acquireErr = &lock.SealedError{Key: "k", Note: reservation.OwnerNote("alice")}
			},
			check: wantErr(reservation.ErrSeatTaken, reservation.ErrUnavailable),
			calls: []string{"Schedule", acquired(seat), "SeatReservation"},
		},
		{
			name: "the owner's retry when PostgreSQL cannot be reached is unavailable, not taken",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.addReservation(scheduleID, seat, "alice")
				repo.fail["SeatReservation"] = errDBDown
				locker.acquireErr = &lock.SealedError{Key: "k", Note: reservation.OwnerNote("alice")}
			},
			check: wantErr(reservation.ErrUnavailable, reservation.ErrSeatTaken),
			calls: []string{"Schedule", acquired(seat), "SeatReservation"},
			rows:  1,
		},
		{
			name:  "a failed booking is not sealed",
			cmd:   cmd,
			seal:  true,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) { repo.fail["InsertReservation"] = errDBDown },
			check: wantErr(reservation.ErrUnavailable, reservation.ErrSeatTaken),
			calls: settled,
		},
		{
			name: "a stale fence is not sealed",
			cmd:  cmd,
			seal: true,
			setup: func(repo *fakeRepo, _ *fakeLocker, _ context.CancelFunc) {
				repo.setFence(scheduleID, seat, 1000)
			},
			check: wantLeaseError(reservation.ErrStaleFence),
			calls: allCalls,
		},
		{
			name: "lease lost during insert",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.before["InsertReservation"] = func() { locker.lastLease().lose() }
			},
			// The insert is not the lease's to cancel: no newer holder
			// wrote, so the fence lets it book.
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
		{
			name: "lease lost while the store is down",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.before["InsertReservation"] = func() { locker.lastLease().lose() }
				repo.fail["InsertReservation"] = errDBDown
			},
			// An outage is an outage whoever holds the lock: 503, not
			// "locked". Only a stale fence or a check cancelled by the
			// lost lease answers "locked".
			check: wantErr(reservation.ErrUnavailable, reservation.ErrSeatLocked),
			calls: settled,
		},
		{
			name: "lease lost after the insert committed",
			cmd:  cmd,
			setup: func(repo *fakeRepo, locker *fakeLocker, _ context.CancelFunc) {
				repo.after["InsertReservation"] = func() { locker.lastLease().lose() }
			},
			// The store decided; a booking that committed stands.
			check: wantBooked(seat),
			calls: allCalls,
			rows:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			repo := newFakeRepo(j)
			repo.addSchedule(scheduleID, seatCount)
			locker := &fakeLocker{j: j}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.setup != nil {
				tt.setup(repo, locker, cancel)
			}
			svc := reservation.NewService(repo, locker, reservation.Config{LockTTL: lockTTL, SealBooked: tt.seal}, nil)

			r, err := svc.Reserve(ctx, tt.cmd)

			tt.check(t, r.Reservation, err)
			if got := j.list(); !slices.Equal(got, tt.calls) {
				t.Errorf("calls:\n got  %q\n want %q", got, tt.calls)
			}
			if locker.acquired() > 0 {
				if got := locker.releases(); got != 1 {
					t.Errorf("a lease was acquired and released %d times, want exactly once", got)
				}
			}
			if got := repo.count(); got != tt.rows {
				t.Errorf("stored reservations = %d, want %d", got, tt.rows)
			}
		})
	}
}

// The returned reservation is the one the repository stored.
func TestReserveReturnsStoredReservation(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	svc := reservation.NewService(repo, &fakeLocker{j: j}, reservation.Config{LockTTL: lockTTL}, nil)

	r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "alice"})
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	stored, err := repo.Reservation(context.Background(), r.ID())
	if err != nil {
		t.Fatalf("stored reservation %v: %v", r.ID(), err)
	}
	if stored != r.Reservation {
		t.Errorf("Reserve returned %+v, repository holds %+v", r, stored)
	}
}

func TestReserveLockKeyAndTTL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration
	}{
		{"configured", 250 * time.Millisecond, 250 * time.Millisecond},
		{"zero means default", 0, reservation.DefaultLockTTL},
		{"negative means default", -time.Second, reservation.DefaultLockTTL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := &journal{}
			repo := newFakeRepo(j)
			repo.addSchedule(42, 2000)
			locker := &fakeLocker{j: j}
			svc := reservation.NewService(repo, locker, reservation.Config{LockTTL: tt.ttl}, nil)

			if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: 42, SeatID: 1999, UserID: "alice"}); err != nil {
				t.Fatalf("Reserve: %v", err)
			}
			want := fmt.Sprintf("Acquire lock:{schedule:42}:seat:1999 %s", tt.want)
			if got := j.list(); len(got) < 2 || got[1] != want {
				t.Errorf("calls = %q, want second call %q", got, want)
			}
			if n, lease := locker.acquired(), locker.lease(0); n != 1 || lease.Key() != "lock:{schedule:42}:seat:1999" {
				t.Errorf("%d leases, first %v; want one on lock:{schedule:42}:seat:1999", n, lease)
			}
			want = fmt.Sprintf("%+v", lock.Options{TTL: tt.want})
			if got := locker.options(); len(got) != 1 || got[0] != (lock.Options{TTL: tt.want}) {
				t.Errorf("Acquire options = %+v, want [%s]", got, want)
			}
		})
	}
}
