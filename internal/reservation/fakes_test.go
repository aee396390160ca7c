package reservation_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
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
// reservation per seat rule like the UNIQUE constraint does, and the seat
// fences like PostgreSQL's seat_fences table: an insert must carry a fence
// greater than the seat's, and only a successful insert moves it (a failed
// transaction rolls its fence update back). fail makes a method return an
// error; before and after run hooks around a method's work. committed runs
// once InsertReservation has stored its row, before it answers, and is
// given the insert's context: if that context ended meanwhile, the answer
// is lost and the call returns the context's error although the row stays,
// as when a context ends while PostgreSQL's reply to COMMIT is on its way. It records the context each
// method was called with and every NewReservation it was asked to insert.
// It keeps no holds (their methods are the nil Repository's).
type fakeRepo struct {
	reservation.Repository
	j         *journal
	mu        sync.Mutex
	nextID    int64
	sched     map[int64]reservation.Schedule
	res       map[uuid.UUID]reservation.Reservation
	byClaim   map[uuid.UUID]uuid.UUID // idempotency claim → reservation
	fences    map[seatKey]int64
	inserted  []reservation.NewReservation
	ctxs      map[string][]context.Context
	fail      map[string]error
	before    map[string]func()
	after     map[string]func()
	committed func(insert context.Context)
}

type seatKey struct {
	scheduleID int64
	seatID     int
}

var _ reservation.Repository = (*fakeRepo)(nil)

func newFakeRepo(j *journal) *fakeRepo {
	return &fakeRepo{
		j:       j,
		nextID:  100,
		sched:   map[int64]reservation.Schedule{},
		res:     map[uuid.UUID]reservation.Reservation{},
		byClaim: map[uuid.UUID]uuid.UUID{},
		fences:  map[seatKey]int64{},
		ctxs:    map[string][]context.Context{},
		fail:    map[string]error{},
		before:  map[string]func(){},
		after:   map[string]func(){},
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

// setFence records fence as the highest one seen on a seat, as a booking
// by a newer lock holder would have.
func (f *fakeRepo) setFence(scheduleID int64, seatID int, fence int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fences[seatKey{scheduleID, seatID}] = fence
}

func (f *fakeRepo) fence(scheduleID int64, seatID int) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fences[seatKey{scheduleID, seatID}]
}

// insertsSeen returns every NewReservation InsertReservation was called
// with, in order, whatever its outcome.
func (f *fakeRepo) insertsSeen() []reservation.NewReservation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]reservation.NewReservation(nil), f.inserted...)
}

// contexts returns the contexts method was called with, in order.
func (f *fakeRepo) contexts(method string) []context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]context.Context(nil), f.ctxs[method]...)
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
	f.mu.Lock()
	f.ctxs[method] = append(f.ctxs[method], ctx)
	f.mu.Unlock()
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

func (f *fakeRepo) ListSchedules(ctx context.Context, before int64, limit int) ([]reservation.Schedule, error) {
	if err := f.enter(ctx, "ListSchedules"); err != nil {
		return nil, err
	}
	defer f.leave("ListSchedules")
	f.mu.Lock()
	defer f.mu.Unlock()
	var list []reservation.Schedule
	for _, s := range f.sched {
		if before == 0 || s.ID() < before {
			list = append(list, s)
		}
	}
	slices.SortFunc(list, func(a, b reservation.Schedule) int { return cmp.Compare(b.ID(), a.ID()) })
	return list[:min(limit, len(list))], nil
}

func (f *fakeRepo) OccupiedSeats(ctx context.Context, scheduleID int64) ([]reservation.OccupiedSeat, error) {
	if err := f.enter(ctx, "OccupiedSeats"); err != nil {
		return nil, err
	}
	defer f.leave("OccupiedSeats")
	f.mu.Lock()
	defer f.mu.Unlock()
	var seats []reservation.OccupiedSeat
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID && !r.Cancelled() {
			seats = append(seats, reservation.OccupiedSeat{ID: r.SeatID(), Status: reservation.SeatReserved})
		}
	}
	return seats, nil
}

func (f *fakeRepo) reservedLocked(scheduleID int64, seatID int) bool {
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID && r.SeatID() == seatID && !r.Cancelled() {
			return true
		}
	}
	return false
}

// ownerLocked is the user of the seat's active reservation; callers hold
// mu and know there is one.
func (f *fakeRepo) ownerLocked(scheduleID int64, seatID int) string {
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID && r.SeatID() == seatID && !r.Cancelled() {
			return r.UserID()
		}
	}
	return ""
}

// CancelReservation marks the reservation cancelled and raises the seat's
// fence, as the PostgreSQL adapter does.
func (f *fakeRepo) CancelReservation(ctx context.Context, id uuid.UUID, fence int64) (reservation.Reservation, error) {
	if err := f.enter(ctx, "CancelReservation"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("CancelReservation")
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.res[id]
	if !ok {
		return reservation.Reservation{}, reservation.ErrReservationNotFound
	}
	if !r.Cancelled() {
		r = r.WithCancelledAt(createdAt.Add(time.Hour))
		f.res[id] = r
	}
	key := seatKey{r.ScheduleID(), r.SeatID()}
	f.fences[key] = max(f.fences[key], fence)
	return r, nil
}

func (f *fakeRepo) InsertReservation(ctx context.Context, nr reservation.NewReservation) (reservation.Reservation, error) {
	f.mu.Lock()
	f.inserted = append(f.inserted, nr)
	f.mu.Unlock()
	if err := f.enter(ctx, "InsertReservation"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("InsertReservation")
	r, err := f.store(nr)
	if err != nil {
		return reservation.Reservation{}, err
	}
	if f.committed != nil {
		f.committed(ctx)
		if err := ctx.Err(); err != nil {
			return reservation.Reservation{}, err
		}
	}
	return r, nil
}

// store is InsertReservation's transaction: the fence, then the row.
func (f *fakeRepo) store(nr reservation.NewReservation) (reservation.Reservation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sched[nr.ScheduleID]
	key := seatKey{nr.ScheduleID, nr.SeatID}
	switch {
	case !ok:
		return reservation.Reservation{}, reservation.ErrScheduleNotFound
	case !s.HasSeat(nr.SeatID):
		return reservation.Reservation{}, reservation.ErrSeatNotFound
	case nr.Fence <= f.fences[key]:
		return reservation.Reservation{}, reservation.ErrStaleFence
	case f.reservedLocked(nr.ScheduleID, nr.SeatID):
		// Like PostgreSQL, the refusal names the seat's owner.
		return reservation.Reservation{}, &reservation.SeatTakenError{Owner: f.ownerLocked(nr.ScheduleID, nr.SeatID)}
	}
	f.fences[key] = nr.Fence
	r := reservation.RestoreReservation(uuid.New(), nr.ScheduleID, nr.SeatID, nr.UserID, createdAt)
	f.res[r.ID()] = r
	if nr.Claim != uuid.Nil {
		f.byClaim[nr.Claim] = r.ID()
	}
	return r, nil
}

func (f *fakeRepo) ReservationByClaim(ctx context.Context, claim uuid.UUID) (reservation.Reservation, error) {
	if err := f.enter(ctx, "ReservationByClaim"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("ReservationByClaim")
	f.mu.Lock()
	defer f.mu.Unlock()
	id, ok := f.byClaim[claim]
	if !ok {
		return reservation.Reservation{}, reservation.ErrReservationNotFound
	}
	return f.res[id], nil
}

func (f *fakeRepo) SeatReservation(ctx context.Context, scheduleID int64, seatID int) (reservation.Reservation, error) {
	if err := f.enter(ctx, "SeatReservation"); err != nil {
		return reservation.Reservation{}, err
	}
	defer f.leave("SeatReservation")
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.res {
		if r.ScheduleID() == scheduleID && r.SeatID() == seatID && !r.Cancelled() {
			return r, nil
		}
	}
	return reservation.Reservation{}, reservation.ErrReservationNotFound
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
// return releaseErr. It never blocks, so tests need no timing. Each lease
// gets the next fence after lastFence (1, 2, ... by default), and a context
// that keeps Acquire's values but not its cancellation, as the real Client's
// leases do (a lease lives as long as the lock, not as the call that took
// it), carrying the lease under leaseCtxKey so a test can tell that work ran
// under it. It takes no several keys at once (lock.MultiLocker is nil).
type fakeLocker struct {
	lock.MultiLocker
	j          *journal
	acquireErr error
	releaseErr error
	lastFence  int64
	// onAcquire, if set, sees each lease before Acquire returns it.
	onAcquire func(*fakeLease)

	mu     sync.Mutex
	opts   []lock.Options
	leases []*fakeLease
}

var _ lock.Locker = (*fakeLocker)(nil)

// leaseCtxKey is the context key under which a fake lease's context holds
// the lease itself.
type leaseCtxKey struct{}

func (l *fakeLocker) Acquire(ctx context.Context, key string, opts lock.Options) (lock.Lease, error) {
	l.j.add("Acquire %s %s", key, opts.TTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opts = append(l.opts, opts)
	if l.acquireErr != nil {
		return nil, l.acquireErr
	}
	l.lastFence++
	lease := &fakeLease{j: l.j, key: key, fence: l.lastFence, err: l.releaseErr}
	lease.ctx, lease.cancel = context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), leaseCtxKey{}, lease))
	l.leases = append(l.leases, lease)
	if l.onAcquire != nil {
		l.onAcquire(lease)
	}
	return lease, nil
}

// options returns the Options of every Acquire, in order.
func (l *fakeLocker) options() []lock.Options {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]lock.Options(nil), l.opts...)
}

// lease returns the i-th lease handed out, or nil.
func (l *fakeLocker) lease(i int) *fakeLease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i >= len(l.leases) {
		return nil
	}
	return l.leases[i]
}

// lastLease returns the latest lease handed out; a test hook running inside
// a use case uses it to reach the lease the use case holds.
func (l *fakeLocker) lastLease() *fakeLease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.leases) == 0 {
		return nil
	}
	return l.leases[len(l.leases)-1]
}

// acquired returns how many leases were handed out.
func (l *fakeLocker) acquired() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.leases)
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
	j      *journal
	key    string
	fence  int64
	err    error
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	released int
}

var _ lock.Lease = (*fakeLease)(nil)

func (l *fakeLease) Key() string              { return l.key }
func (l *fakeLease) Fence() int64             { return l.fence }
func (l *fakeLease) Context() context.Context { return l.ctx }

// lose ends the lease as an expiry or a watchdog finding the key gone does.
func (l *fakeLease) lose() { l.cancel(lock.ErrLeaseLost) }

// Extend succeeds while the lease's context is alive.
func (l *fakeLease) Extend(context.Context, time.Duration) error {
	if l.ctx.Err() != nil {
		return lock.ErrNotHeld
	}
	return nil
}

// Remaining reports a full lease while its context is alive.
func (l *fakeLease) Remaining(context.Context) (time.Duration, error) {
	if l.ctx.Err() != nil {
		return 0, lock.ErrNotHeld
	}
	return time.Second, nil
}

// Release deliberately ignores ctx: the port promises that Release works on
// a cancelled context, and the use case relies on it. Like the real lease,
// it ends the lease's context with ErrReleased.
func (l *fakeLease) Release(context.Context) error {
	l.j.add("Release %s", l.key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released++
	l.cancel(lock.ErrReleased)
	return l.err
}

// Seal ends the lease as Release does, journalled as a seal.
func (l *fakeLease) Seal(context.Context, time.Duration) error {
	l.j.add("Seal %s", l.key)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released++
	l.cancel(lock.ErrReleased)
	return l.err
}

// SealWithNote is Seal, journalled with its note.
func (l *fakeLease) SealWithNote(_ context.Context, _ time.Duration, note string) error {
	l.j.add("Seal %s note %s", l.key, note)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released++
	l.cancel(lock.ErrReleased)
	return l.err
}

var _ lock.Sealer = (*fakeLease)(nil)

func (l *fakeLease) releaseCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.released
}
