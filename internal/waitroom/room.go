package waitroom

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Defaults of Config.
const (
	// DefaultAdmitEvery is how often each instance asks the store to
	// admit what is due: admissions come in steps this far apart.
	DefaultAdmitEvery = 100 * time.Millisecond
	// DefaultSettingsTTL is how long an instance trusts what it read of
	// a schedule's queue (whether the gate is on) when no change was
	// announced.
	DefaultSettingsTTL = time.Second
	// DefaultWatchEvery is how often the positions of the watched tickets
	// are read: a streamed position is never older.
	DefaultWatchEvery = 500 * time.Millisecond
	// DefaultMarkWaitingEvery is how often each instance marks due every
	// queue with buyers in line (Store.MarkWaiting), besides when it
	// starts.
	DefaultMarkWaitingEvery = time.Minute
)

// Config tunes a Room.
type Config struct {
	AdmitEvery  time.Duration
	SettingsTTL time.Duration
	WatchEvery  time.Duration
	// MarkWaitingEvery is how often every queue with buyers in line is
	// marked due, so that a mark lost (an instance killed between a join
	// and its mark) delays a queue this long at most.
	MarkWaitingEvery time.Duration
	Logger           *slog.Logger
	// Observer, when set, learns every round of admission.
	Observer Observer
}

// Observer learns what the rounds of admission did (for metrics).
type Observer interface {
	// Round is called after each round of a schedule's queue this
	// instance ran.
	Round(scheduleID int64, r Round)
	// Totals is called after every round of this instance with the
	// buyers in line and admitted over every queue.
	Totals(inLine, active int64)
}

// Room is the waiting room of every schedule with a queue. Run it.
type Room struct {
	store      Store
	admissions *Admissions
	cfg        Config
	log        *slog.Logger

	mu sync.Mutex
	// queues is whether each schedule asked about has a queue, as this
	// instance last read it (queued).
	queues map[int64]cachedQueued
	// watches are the tickets followed (Watch) by this instance.
	watches map[*Watch]struct{}
	// reading shares a read of a schedule's queue among the callers that
	// miss together; forgotten counts forget's calls, so that a caller
	// that comes after one never shares a read begun before it.
	reading   singleflight.Group
	forgotten uint64
}

type cachedQueued struct {
	on   bool
	read time.Time
}

// NewRoom returns the waiting room kept in store, signing admissions with
// admissions.
func NewRoom(store Store, admissions *Admissions, cfg Config) *Room {
	cfg.AdmitEvery = cmp.Or(cfg.AdmitEvery, DefaultAdmitEvery)
	cfg.SettingsTTL = cmp.Or(cfg.SettingsTTL, DefaultSettingsTTL)
	cfg.WatchEvery = cmp.Or(cfg.WatchEvery, DefaultWatchEvery)
	cfg.MarkWaitingEvery = cmp.Or(cfg.MarkWaitingEvery, DefaultMarkWaitingEvery)
	return &Room{store: store, admissions: admissions, cfg: cfg, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		queues: map[int64]cachedQueued{}, watches: map[*Watch]struct{}{}}
}

// Put creates or changes the queue of a schedule (the caller checked that
// the schedule exists), and returns its settings as stored (the opening
// to the millisecond).
func (r *Room) Put(ctx context.Context, scheduleID int64, s Settings) (Settings, error) {
	if err := s.Validate(); err != nil {
		return Settings{}, err
	}
	s.OpensAt = StoredOpening(s.OpensAt)
	err := r.store.Put(ctx, scheduleID, s)
	r.forget(scheduleID)
	return s, err
}

// Queue returns a schedule's queue and its counts.
func (r *Room) Queue(ctx context.Context, scheduleID int64) (Settings, Counts, error) {
	snap, counts, err := r.store.Counts(ctx, scheduleID)
	return snap.Settings, counts, err
}

// Delete removes a schedule's queue: its sale is open to everyone again.
func (r *Room) Delete(ctx context.Context, scheduleID int64) error {
	err := r.store.Delete(ctx, scheduleID)
	r.forget(scheduleID)
	return err
}

// Join gives userID a place in the schedule's queue, or the one it has:
// created says whether it is new.
func (r *Room) Join(ctx context.Context, scheduleID int64, userID string) (Ticket, bool, error) {
	ticket, key, err := newTicket(scheduleID)
	if err != nil {
		return Ticket{}, false, err
	}
	ticket, snap, created, err := r.store.Join(ctx, scheduleID, userID, ticket, key)
	if err != nil {
		return Ticket{}, false, err
	}
	if len(snap.Places) != 1 || !snap.Places[0].Found {
		return Ticket{}, false, fmt.Errorf("waitroom: join of %q: the store lost the place", userID)
	}
	return r.ticket(scheduleID, ticket, snap, snap.Places[0]), created, nil
}

// Ticket returns where userID's ticket stands; ErrTicketNotFound when it
// is not theirs (or its queue is gone).
func (r *Room) Ticket(ctx context.Context, ticketID, userID string) (Ticket, error) {
	scheduleID, ok := ScheduleOf(ticketID)
	if !ok {
		return Ticket{}, ErrTicketNotFound
	}
	snap, err := r.store.Places(ctx, scheduleID, ticketID)
	if errors.Is(err, ErrQueueNotFound) {
		return Ticket{}, ErrTicketNotFound
	}
	if err != nil {
		return Ticket{}, err
	}
	if len(snap.Places) != 1 || !snap.Places[0].Found || snap.Places[0].UserID != userID {
		return Ticket{}, ErrTicketNotFound
	}
	return r.ticket(scheduleID, ticketID, snap, snap.Places[0]), nil
}

// Leave takes userID's ticket out of the line, or gives up its admission
// (the place goes to the next); leaving again changes nothing.
func (r *Room) Leave(ctx context.Context, ticketID, userID string) error {
	scheduleID, ok := ScheduleOf(ticketID)
	if !ok {
		return ErrTicketNotFound
	}
	_, err := r.store.Leave(ctx, scheduleID, ticketID, userID)
	if errors.Is(err, ErrQueueNotFound) {
		return ErrTicketNotFound
	}
	return err
}

// Check lets a request for a schedule's seats through: always while the
// schedule has no queue, else only with an admission of this user for this
// schedule that still holds. gated reports that the schedule has a queue,
// so that an admission was checked (and held, when err is nil).
func (r *Room) Check(ctx context.Context, scheduleID int64, userID, admission string) (gated bool, err error) {
	on, err := r.queued(ctx, scheduleID)
	if err != nil || !on {
		return false, err
	}
	if admission == "" {
		return true, ErrAdmissionRequired
	}
	ticket, _, err := r.admissions.Verify(admission, scheduleID, userID, time.Now())
	if err != nil {
		return true, err
	}
	admitted, err := r.store.Admitted(ctx, scheduleID, ticket)
	if err != nil {
		return true, err
	}
	if !admitted {
		return true, ErrAdmissionInvalid
	}
	return true, nil
}

// queued reports whether the schedule has a queue, from what this
// instance read of it less than SettingsTTL ago (Put and Delete on any
// instance make every instance read it again).
func (r *Room) queued(ctx context.Context, scheduleID int64) (bool, error) {
	r.mu.Lock()
	c, ok := r.queues[scheduleID]
	forgotten := r.forgotten
	r.mu.Unlock()
	if ok && time.Since(c.read) < r.cfg.SettingsTTL {
		return c.on, nil
	}
	key := strconv.FormatInt(scheduleID, 10) + "/" + strconv.FormatUint(forgotten, 10)
	// The read is shared: one caller giving up must not end it for the
	// others (the client's own timeouts bound it).
	ch := r.reading.DoChan(key, func() (any, error) {
		read := time.Now()
		on, err := r.store.Queued(context.WithoutCancel(ctx), scheduleID)
		if err != nil {
			return false, err
		}
		r.mu.Lock()
		if cur, ok := r.queues[scheduleID]; !ok || cur.read.Before(read) {
			r.queues[scheduleID] = cachedQueued{on: on, read: read}
		}
		r.mu.Unlock()
		return on, nil
	})
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return false, res.Err
		}
		return res.Val.(bool), nil
	}
}

// settingsSweepEvery is how often what an instance read of the queues is
// cleared of the schedules nobody asked about since: every schedule ever
// booked would stay otherwise.
const settingsSweepEvery = time.Minute

func (r *Room) sweepSettings() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, c := range r.queues {
		if time.Since(c.read) > settingsSweepEvery {
			delete(r.queues, id)
		}
	}
}

func (r *Room) forget(scheduleID int64) {
	r.mu.Lock()
	delete(r.queues, scheduleID)
	r.forgotten++
	r.mu.Unlock()
}

// ticket is a place as the buyer sees it.
func (r *Room) ticket(scheduleID int64, id string, snap Snapshot, p Place) Ticket {
	t := Ticket{ID: id, ScheduleID: scheduleID, UserID: p.UserID, State: p.State, OpensAt: snap.Settings.OpensAt}
	switch p.State {
	case Waiting:
		t.Position = p.Position
		wait, known := estimate(p.Position, snap)
		t.EstimatedWait, t.EstimatedWaitUnknown = wait, !known
	case Admitted, Expired:
		t.AdmissionExpiresAt = p.Expires.Truncate(time.Second)
	}
	if p.State == Admitted {
		t.Admission = r.admissions.Sign(scheduleID, id, p.UserID, t.AdmissionExpiresAt)
	}
	return t
}

// estimate is the wait of the buyer at position, rounded up to whole
// admission steps: the position over the rate while the place is within
// maxActive's free places. A place past them waits on admitted buyers
// leaving or expiring: the rate measured over the last ten seconds says
// how fast they have; with none admitted then, the wait is unknown
// (false): the rate admits nobody while maxActive is full.
func estimate(position int, snap Snapshot) (time.Duration, bool) {
	rate := float64(snap.Settings.AdmitPerSecond)
	if capped := snap.Settings.MaxActive; capped > 0 && int64(position) > int64(capped)-snap.Active {
		if snap.ObservedRate <= 0 {
			return 0, false
		}
		rate = min(rate, snap.ObservedRate)
	}
	return time.Duration(math.Ceil(float64(position)/rate*10) * float64(time.Second) / 10), true
}

// ticketPrefixSeparator separates a ticket's schedule from its random
// part: "42-3f9a...".
const ticketPrefixSeparator = "-"

// newTicket returns a new ticket of the schedule and its pre-queue key,
// uniform in [0, 1), both from the cryptographic source: the pre-queue's
// order is the order of these keys.
func newTicket(scheduleID int64) (string, float64, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", 0, err
	}
	key := float64(binary.BigEndian.Uint64(b[16:])>>11) / (1 << 53)
	return strconv.FormatInt(scheduleID, 10) + ticketPrefixSeparator + hex.EncodeToString(b[:16]), key, nil
}

// ScheduleOf reads the schedule a ticket belongs to.
func ScheduleOf(ticket string) (int64, bool) {
	prefix, random, ok := strings.Cut(ticket, ticketPrefixSeparator)
	if !ok || len(random) != 32 {
		return 0, false
	}
	if _, err := hex.DecodeString(random); err != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(prefix, 10, 64)
	if err != nil || id < 1 || strconv.FormatInt(id, 10) != prefix {
		return 0, false
	}
	return id, true
}

// Run admits what is due in every queue every AdmitEvery and follows the
// announced changes, until ctx ends. It marks the queues with buyers in
// line due when it starts and every MarkWaitingEvery.
func (r *Room) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { r.store.Changes(ctx, r.forget) })
	defer wg.Wait()
	tick := time.NewTicker(r.cfg.AdmitEvery)
	defer tick.Stop()
	sweep := time.NewTicker(settingsSweepEvery)
	defer sweep.Stop()
	markWaiting := time.NewTicker(r.cfg.MarkWaitingEvery)
	defer markWaiting.Stop()
	unmarked := true
	var failing bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			r.sweepSettings()
			continue
		case <-markWaiting.C:
			unmarked = true
			continue
		case <-tick.C:
		}
		var err error
		if unmarked {
			err = r.store.MarkWaiting(ctx)
			unmarked = err != nil
		}
		if err == nil {
			err = r.admitRound(ctx)
		}
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			r.log.Warn("waiting room: admission stopped", "error", err)
		case err == nil && failing:
			r.log.Info("waiting room: admission goes on")
		}
		failing = err != nil
	}
}

// admitRound runs one round of admission in the queues that are due.
func (r *Room) admitRound(ctx context.Context) error {
	rounds, err := r.store.AdmitDue(ctx, r.cfg.AdmitEvery)
	if err != nil {
		return err
	}
	if r.cfg.Observer != nil {
		for id, round := range rounds.Queues {
			r.cfg.Observer.Round(id, round)
		}
		r.cfg.Observer.Totals(rounds.InLine, rounds.Active)
	}
	return nil
}
