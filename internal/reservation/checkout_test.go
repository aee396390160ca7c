package reservation_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// fakeMultiLocker grants AcquireAll unless held is set. A granted lease's
// keys are sorted as strings, as the real Client sorts them, and each key's
// fence is 1000 + its seat number, so a test can tell which fence went
// with which seat.
type fakeMultiLocker struct {
	held       *lock.HeldError
	releaseErr error

	mu     sync.Mutex
	leases []*fakeMultiLease
}

// Acquire is not used by Hold.
func (l *fakeMultiLocker) Acquire(context.Context, string, lock.Options) (lock.Lease, error) {
	return nil, errors.New("fakeMultiLocker: Acquire not expected")
}

func (l *fakeMultiLocker) AcquireAll(_ context.Context, keys []string, _ lock.Options) (lock.MultiLease, error) {
	if l.held != nil {
		return nil, l.held
	}
	sorted := slices.Sorted(slices.Values(keys))
	lease := &fakeMultiLease{keys: sorted, releaseErr: l.releaseErr}
	for _, k := range sorted {
		seat, _ := strconv.Atoi(k[strings.LastIndex(k, ":")+1:])
		lease.fences = append(lease.fences, 1000+int64(seat))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leases = append(l.leases, lease)
	return lease, nil
}

type fakeMultiLease struct {
	keys       []string
	fences     []int64
	released   int
	releaseErr error
}

func (l *fakeMultiLease) Keys() []string                                   { return l.keys }
func (l *fakeMultiLease) Fences() []int64                                  { return l.fences }
func (l *fakeMultiLease) Context() context.Context                         { return context.Background() }
func (l *fakeMultiLease) Remaining(context.Context) (time.Duration, error) { return time.Second, nil }
func (l *fakeMultiLease) Extend(context.Context, time.Duration) error      { return nil }
func (l *fakeMultiLease) Release(context.Context) error {
	l.released++
	return l.releaseErr
}

// fakeHoldRepo records the holds it is asked to insert and answers
// UnavailableSeats with unavailable. It stores no reservations (their
// methods are the nil Repository's).
type fakeHoldRepo struct {
	reservation.Repository
	scheduleReads int
	insertErr     error
	unavailable   []reservation.UnavailableSeat
	inserted      []reservation.NewHold
	made          []reservation.Hold // what InsertHold stored, in order
	claimReads    int
}

func (r *fakeHoldRepo) Schedule(_ context.Context, id int64) (reservation.Schedule, error) {
	r.scheduleReads++
	if id != scheduleID {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	return reservation.RestoreSchedule(id, "Hamlet", createdAt, seatCount), nil
}

func (r *fakeHoldRepo) InsertHold(_ context.Context, h reservation.NewHold) (reservation.Hold, error) {
	r.inserted = append(r.inserted, h)
	if r.insertErr != nil {
		return reservation.Hold{}, r.insertErr
	}
	made := reservation.RestoreHold(uuid.New(), h.ScheduleID, h.SeatIDs, h.UserID, createdAt, createdAt.Add(h.TTL),
		reservation.HoldActive)
	r.made = append(r.made, made)
	return made, nil
}

func (r *fakeHoldRepo) HoldByClaim(_ context.Context, claim uuid.UUID) (reservation.Hold, error) {
	r.claimReads++
	for i, h := range r.inserted {
		if h.Claim == claim && claim != uuid.Nil && i < len(r.made) {
			return r.made[i], nil
		}
	}
	return reservation.Hold{}, reservation.ErrHoldNotFound
}

func (r *fakeHoldRepo) UnavailableSeats(context.Context, int64, []int) ([]reservation.UnavailableSeat, error) {
	return r.unavailable, nil
}

func (r *fakeHoldRepo) Hold(context.Context, uuid.UUID) (reservation.Hold, error) {
	return reservation.Hold{}, reservation.ErrHoldNotFound
}

func (r *fakeHoldRepo) ConfirmHold(context.Context, uuid.UUID, string) ([]reservation.Reservation, error) {
	return nil, reservation.ErrHoldNotFound
}

func (r *fakeHoldRepo) ReleaseHold(context.Context, uuid.UUID, string) ([]int, error) {
	return nil, reservation.ErrHoldNotFound
}

func (r *fakeHoldRepo) ExpiredClaims(context.Context, int) ([]reservation.SeatRef, error) {
	return nil, nil
}

func (r *fakeHoldRepo) DropExpiredClaim(context.Context, reservation.SeatRef) (bool, error) {
	return false, nil
}

func newCheckout(repo *fakeHoldRepo, locker *fakeMultiLocker) *reservation.Service {
	return reservation.NewService(repo, locker, reservation.Config{HoldTTL: 3 * time.Minute}, nil)
}

// The lock store sorts keys as strings ("seat:10" before "seat:2"); each
// seat must still be stored with its own lock's fence.
func TestHoldStoresEachSeatWithItsOwnFence(t *testing.T) {
	t.Parallel()
	repo, locker := &fakeHoldRepo{}, &fakeMultiLocker{}
	h, err := newCheckout(repo, locker).Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{2, 10, 1}, UserID: "alice"})
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if len(repo.inserted) != 1 {
		t.Fatalf("%d inserts, want 1", len(repo.inserted))
	}
	got := repo.inserted[0]
	if !slices.Equal(got.SeatIDs, []int{1, 2, 10}) || !slices.Equal(got.Fences, []int64{1001, 1002, 1010}) {
		t.Errorf("inserted seats %v with fences %v, want [1 2 10] with [1001 1002 1010]", got.SeatIDs, got.Fences)
	}
	if got.TTL != 3*time.Minute || got.UserID != "alice" || !slices.Equal(h.SeatIDs(), []int{1, 2, 10}) {
		t.Errorf("inserted %+v, hold %+v", got, h)
	}
	if locker.leases[0].released != 1 {
		t.Errorf("seat locks released %d times after the hold, want once", locker.leases[0].released)
	}
}

// Refused because some locks were held: every unavailable seat is named,
// with the store's reasons winning over "locked" (a booked seat's key is
// sealed, which looks held), and nothing is inserted.
func TestHoldRefusedListsEverySeat(t *testing.T) {
	t.Parallel()
	repo := &fakeHoldRepo{unavailable: []reservation.UnavailableSeat{
		{SeatID: 4, Reason: reservation.ReasonTaken},
		{SeatID: 5, Reason: reservation.ReasonHeld, RetryAfter: 30 * time.Second},
	}}
	locker := &fakeMultiLocker{held: &lock.HeldError{Keys: []lock.KeyHeld{
		{Key: reservation.SeatLockKey(scheduleID, 3), Remaining: 1500 * time.Millisecond},
		{Key: reservation.SeatLockKey(scheduleID, 4), Remaining: 24 * time.Hour},
	}}}
	_, err := newCheckout(repo, locker).Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{6, 5, 4, 3}, UserID: "bob"})
	var refused *reservation.SeatsUnavailableError
	if !errors.As(err, &refused) || !errors.Is(err, reservation.ErrSeatsUnavailable) {
		t.Fatalf("Hold error = %v, want a *SeatsUnavailableError", err)
	}
	want := []reservation.UnavailableSeat{
		{SeatID: 3, Reason: reservation.ReasonLocked, RetryAfter: 1500 * time.Millisecond},
		{SeatID: 4, Reason: reservation.ReasonTaken},
		{SeatID: 5, Reason: reservation.ReasonHeld, RetryAfter: 30 * time.Second},
	}
	if !slices.Equal(refused.Seats, want) {
		t.Errorf("seats = %+v, want %+v", refused.Seats, want)
	}
	if refused.RetryAfter() != 0 {
		t.Errorf("RetryAfter = %s with a taken seat, want 0", refused.RetryAfter())
	}
	if len(repo.inserted) != 0 {
		t.Errorf("a refused hold inserted %+v", repo.inserted)
	}

	// Without a taken seat, the longest wait is when to retry.
	repo.unavailable = repo.unavailable[1:]
	locker.held.Keys = locker.held.Keys[:1]
	_, err = newCheckout(repo, locker).Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{3, 5}, UserID: "bob"})
	if !errors.As(err, &refused) || refused.RetryAfter() != 30*time.Second {
		t.Errorf("Hold error = %v, want a refusal to retry after 30s", err)
	}
}

func TestHoldValidatesBeforeLocking(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		cmd   reservation.HoldCommand
		field string
		want  error
	}{
		{"no seats", reservation.HoldCommand{ScheduleID: scheduleID, UserID: "a"}, "seatIds", nil},
		{"eleven seats", reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, UserID: "a"}, "seatIds", nil},
		{"a seat twice", reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{3, 1, 3}, UserID: "a"}, "seatIds", nil},
		{"seat zero", reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{0, 1}, UserID: "a"}, "seatIds[0]", nil},
		{"no user", reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1}}, "userId", nil},
		{"seat outside", reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1, seatCount + 1}, UserID: "a"}, "", reservation.ErrSeatNotFound},
		{"unknown schedule", reservation.HoldCommand{ScheduleID: scheduleID + 1, SeatIDs: []int{1}, UserID: "a"}, "", reservation.ErrScheduleNotFound},
	} {
		repo, locker := &fakeHoldRepo{}, &fakeMultiLocker{}
		_, err := newCheckout(repo, locker).Hold(context.Background(), tt.cmd)
		var invalid *reservation.InvalidError
		switch {
		case tt.want != nil && !errors.Is(err, tt.want):
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		case tt.want == nil && (!errors.As(err, &invalid) || invalid.Field != tt.field):
			t.Errorf("%s: error %v, want an InvalidError on %s", tt.name, err, tt.field)
		}
		if len(locker.leases) != 0 || len(repo.inserted) != 0 {
			t.Errorf("%s: locked or inserted before refusing", tt.name)
		}
	}
}

func TestHoldReleasesItsLocksWhenTheInsertFails(t *testing.T) {
	t.Parallel()
	repo, locker := &fakeHoldRepo{insertErr: errDBDown}, &fakeMultiLocker{}
	_, err := newCheckout(repo, locker).Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1}, UserID: "alice"})
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("Hold error = %v, want ErrUnavailable", err)
	}
	if locker.leases[0].released != 1 {
		t.Errorf("seat locks released %d times, want once", locker.leases[0].released)
	}
}

// A hold's seat locks lost before their release are a warning, as a
// booking's are: the hold stands, and its caller hears nothing of it.
func TestHoldWarnsWhenItsLocksWereLost(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	repo, locker := &fakeHoldRepo{}, &fakeMultiLocker{releaseErr: lock.ErrNotHeld}
	svc := reservation.NewService(repo, locker, reservation.Config{}, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, err := svc.Hold(context.Background(),
		reservation.HoldCommand{ScheduleID: scheduleID, SeatIDs: []int{1, 2}, UserID: "alice"}); err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "seat lock expired before release") {
		t.Errorf("log = %q, want a warning that the seat locks expired", got)
	}
}
