package reservation_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// errDBDown is what a PostgreSQL adapter returns when the server is gone.
var errDBDown = fmt.Errorf("postgres: query: %w: %w", reservation.ErrUnavailable, io.ErrUnexpectedEOF)

// journal records the calls made to the fakes, in order, so a test can assert
// which ports a use case touched and in which sequence.
type journal struct {
	mu    sync.Mutex
	calls []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, fmt.Sprintf(format, args...))
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.calls...)
}

// fakeRepo is an in-memory reservation.Repository that enforces the one
// reservation per seat rule like the UNIQUE constraint does. fail makes a
// method return an error; before and after run hooks around a method's work.
type fakeRepo struct {
	j      *journal
	mu     sync.Mutex
	nextID int64
	sched  map[int64]reservation.Schedule
	res    map[uuid.UUID]reservation.Reservation
	fail   map[string]error
	before map[string]func()
	after  map[string]func()
}

var _ reservation.Repository = (*fakeRepo)(nil)

func newFakeRepo(j *journal) *fakeRepo {
	return &fakeRepo{
		j:      j,
		nextID: 100,
		sched:  map[int64]reservation.Schedule{},
		res:    map[uuid.UUID]reservation.Reservation{},
		fail:   map[string]error{},
		before: map[string]func(){},
		after:  map[string]func(){},
	}
}

var createdAt = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func (f *fakeRepo) addSchedule(id int64, seatCount int) reservation.Schedule {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := reservation.RestoreSchedule(id, "Hamlet", createdAt.Add(24*time.Hour), seatCount)
	f.sched[id] = s
	return s
}

func (f *fakeRepo) addReservation(scheduleID int64, seatID int, userID string) reservation.Reservation {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := reservation.RestoreReservation(uuid.New(), scheduleID, seatID, userID, createdAt)
	f.res[r.ID()] = r
	return r
}

func (f *fakeRepo) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.res)
}

// enter journals the call, runs its before hook and returns the injected
// failure, or ctx's error as a real store would.
func (f *fakeRepo) enter(ctx context.Context, method string) error {
	f.j.add("%s", method)
	if hook := f.before[method]; hook != nil {
		hook()
	}
	if err := f.fail[method]; err != nil {
		return err
	}
	return ctx.Err()
}

func (f *fakeRepo) leave(method string) {
	if hook := f.after[method]; hook != nil {
		hook()
	}
}

func (f *fakeRepo) CreateSchedule(ctx context.Context, s reservation.Schedule) (reservation.Schedule, error) {
	if err := f.enter(ctx, "CreateSchedule"); err != nil {
		return reservation.Schedule{}, err
	}
	defer f.leave("CreateSchedule")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	stored := reservation.RestoreSchedule(f.nextID, s.Title(), s.StartsAt(), s.SeatCount())
	f.sched[stored.ID()] = stored
	return stored, nil
}

func (f *fakeRepo) Schedule(ctx context.Context, id int64) (reservation.Schedule, error) {
	if err := f.enter(ctx, "Schedule"); err != nil {
		return reservation.Schedule{}, err
	}
	defer f.leave("Schedule")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sched[id]
	if !ok {
		return reservation.Schedule{}, reservation.ErrScheduleNotFound
	}
	return s, nil
}

func (f *fakeRepo) ReservedSeats(ctx context.Context, scheduleID int64) ([]int, error) {
	if err := f.enter(ctx, "ReservedSeats"); err != nil {
		return nil, err
	}
	defer f.leave("ReservedSeats")
	f.mu.Lock()
	defer f.mu.Unlock()
	var seats []int
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID {
			seats = append(seats, r.SeatID())
		}
	}
	return seats, nil
}

func (f *fakeRepo) SeatReserved(ctx context.Context, scheduleID int64, seatID int) (bool, error) {
	if err := f.enter(ctx, "SeatReserved"); err != nil {
		return false, err
	}
	defer f.leave("SeatReserved")
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reservedLocked(scheduleID, seatID), nil
}

func (f *fakeRepo) reservedLocked(scheduleID int64, seatID int) bool {
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID && r.SeatID() == seatID {
			return true
		}
	}
	return false
}

func (f *fakeRepo) InsertReservation(ctx context.Context, scheduleID int64, seatID int, userID string) (reservation.Reservation, error) {
	if err := f.enter(ctx, "InsertReservation"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("InsertReservation")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sched[scheduleID]
	switch {
	case !ok:
		return reservation.Reservation{}, reservation.ErrScheduleNotFound
	case !s.HasSeat(seatID):
		return reservation.Reservation{}, reservation.ErrSeatNotFound
	case f.reservedLocked(scheduleID, seatID):
		return reservation.Reservation{}, reservation.ErrSeatTaken
	}
	r := reservation.RestoreReservation(uuid.New(), scheduleID, seatID, userID, createdAt)
	f.res[r.ID()] = r
	return r, nil
}

func (f *fakeRepo) Reservation(ctx context.Context, id uuid.UUID) (reservation.Reservation, error) {
	if err := f.enter(ctx, "Reservation"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("Reservation")
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.res[id]
	if !ok {
		return reservation.Reservation{}, reservation.ErrReservationNotFound
	}
	return r, nil
}

// fakeLocker grants every Acquire unless acquireErr is set; its leases
// return releaseErr. It never blocks, so tests need no timing.
type fakeLocker struct {
	j          *journal
	acquireErr error
	releaseErr error

	mu     sync.Mutex
	leases []*fakeLease
}

var _ lock.Locker = (*fakeLocker)(nil)

func (l *fakeLocker) Acquire(_ context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	l.j.add("Acquire %s %s", key, ttl)
	if l.acquireErr != nil {
		return nil, l.acquireErr
	}
	lease := &fakeLease{j: l.j, key: key, err: l.releaseErr}
	l.mu.Lock()
	l.leases = append(l.leases, lease)
	l.mu.Unlock()
	return lease, nil
}

// releases counts Release calls over every lease handed out.
func (l *fakeLocker) releases() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, lease := range l.leases {
		n += lease.releaseCount()
	}
	return n
}

type fakeLease struct {
	j   *journal
	key string
	err error

	mu       sync.Mutex
	released int
}

var _ lock.Lease = (*fakeLease)(nil)

func (l *fakeLease) Key() string { return l.key }

// Release deliberately ignores ctx: the port promises that Release works on
// a cancelled context, and the use case relies on it.
func (l *fakeLease) Release(context.Context) error {
	l.j.add("Release %s", l.key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released++
	return l.err
}

func (l *fakeLease) releaseCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released
}
