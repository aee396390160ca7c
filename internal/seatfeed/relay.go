package seatfeed

// The relay of the seat_changes outbox to the live seat map:
// every committed change of a seat, written by the booking's own
// transaction, is appended to its schedule's Redis stream and then deleted
// from the outbox, so a change reaches the stream even when the instance
// that made it dies right after its COMMIT.
//
// One relay runs at a time across the instances: each instance runs Run,
// and the one that holds the relay's lock (a lease from the lock port,
// renewed while it relays) reads the oldest pending changes in id order,
// appends them (Feed.Append, which skips a change whose position
// its seat's stream already has) and deletes them. Rows are deleted only
// after their append succeeded: a crash between the two re-delivers them,
// and the positions make that harmless. The others stand by and take over
// when the lease is released or expires.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Defaults of RelayConfig.
const (
	DefaultRelayBatchSize  = 500
	DefaultRelayInterval   = 15 * time.Millisecond
	DefaultRelayLeaseTTL   = 5 * time.Second
	DefaultRelayStandby    = time.Second
	DefaultRelayMaxBacklog = 1_000_000
	minBackoff             = 50 * time.Millisecond
	defaultMaxBackoff      = 5 * time.Second
)

// Outbox is the seat_changes table (postgres.SeatChanges): Pending hands
// out the oldest changes in position order, Delete forgets relayed ones by
// position.
type Outbox interface {
	Pending(ctx context.Context, limit int) ([]reservation.SeatChange, error)
	Delete(ctx context.Context, ids []int64) error
	Backlog(ctx context.Context) (rows int64, oldest time.Duration, err error)
	Trim(ctx context.Context, keep int64) (int64, error)
}

// Appender is where changes are relayed to (Feed.Append).
type Appender interface {
	Append(ctx context.Context, batches []ScheduleChanges) (added int, err error)
}

// RelayConfig tunes a Relay. Zero values take the defaults.
type RelayConfig struct {
	// Key is the relay's lock key; every instance of a deployment must
	// use the same one.
	Key string
	// BatchSize is how many changes one pass reads at most. A full pass
	// is followed by the next at once.
	BatchSize int
	// Interval is the pause after a pass that found fewer than BatchSize
	// changes: about the longest a change waits for the relay when it is
	// idle.
	Interval time.Duration
	// LeaseTTL is the relay lock's lease, renewed every third of it while
	// relaying: the longest a crashed relay holds the others off.
	LeaseTTL time.Duration
	// Standby is how often an instance that is not relaying tries to take
	// over (it also waits on the lock, up to the lock client's MaxWait,
	// and is woken when the relay releases it).
	Standby time.Duration
	// MaxBackoff caps the pause after failures, which doubles from 50 ms.
	MaxBackoff time.Duration
	// MaxBacklog is the bound EnforceBound keeps the outbox under.
	MaxBacklog int64
	// ReclaimEvery is how many deleted changes make the relay reclaim
	// their space when the outbox is a Reclaimer (relay_reclaim.go).
	ReclaimEvery int
	Logger       *slog.Logger
	// Metrics, when set, counts relayed changes, failures and drops.
	Metrics *RelayMetrics
}

// Relay moves the outbox's changes to the streams.
type Relay struct {
	locker lock.Locker
	outbox Outbox
	stream Appender
	cfg    RelayConfig
	log    *slog.Logger
	m      *RelayMetrics
	// deletedSinceReclaim counts the changes Pass deleted since the
	// outbox's space was last reclaimed.
	deletedSinceReclaim int
}

// NewRelay returns a Relay from outbox to stream (a Feed, in the service);
// Run runs it.
func NewRelay(locker lock.Locker, outbox Outbox, stream Appender, cfg RelayConfig) *Relay {
	if cfg.Key == "" {
		cfg.Key = "seat-relay"
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultRelayBatchSize
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultRelayInterval
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultRelayLeaseTTL
	}
	if cfg.Standby <= 0 {
		cfg.Standby = DefaultRelayStandby
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = defaultMaxBackoff
	}
	if cfg.MaxBacklog <= 0 {
		cfg.MaxBacklog = DefaultRelayMaxBacklog
	}
	if cfg.ReclaimEvery <= 0 {
		cfg.ReclaimEvery = DefaultRelayReclaimEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := cfg.Metrics
	if m == nil {
		m = newRelayMetrics()
	}
	return &Relay{locker: locker, outbox: outbox, stream: stream, cfg: cfg, log: cfg.Logger.With(slog.String("component", "seat-relay")), m: m}
}

// Run relays whenever this instance holds the relay's lock, and stands by
// otherwise, until ctx ends; then it releases the lock and returns.
func (r *Relay) Run(ctx context.Context) {
	backoff := newBackoff(r.cfg.MaxBackoff)
	for ctx.Err() == nil {
		started := time.Now()
		lease, err := r.locker.Acquire(ctx, r.cfg.Key, lock.Options{TTL: r.cfg.LeaseTTL, Wait: r.cfg.Standby})
		switch {
		case ctx.Err() != nil:
			if err == nil {
				r.release(lease)
			}
			return
		case errors.Is(err, lock.ErrHeld):
			// Another instance relays. The wait may have been cut short
			// (the lock client's MaxWait); try again a Standby later.
			sleep(ctx, r.cfg.Standby-time.Since(started))
			continue
		case err != nil:
			r.log.Warn("seat relay: cannot take the relay lock; retrying", slog.Any("error", err))
			sleep(ctx, backoff.next())
			continue
		}
		backoff.reset()
		r.log.Debug("seat relay: relaying on this instance", slog.Int64("fence", lease.Fence()))
		r.lead(ctx, lease)
		r.release(lease)
	}
}

func (r *Relay) release(lease lock.Lease) {
	if err := lease.Release(context.Background()); err != nil && !errors.Is(err, lock.ErrNotHeld) {
		r.log.Warn("seat relay: releasing the relay lock failed (it expires by itself)", slog.Any("error", err))
	}
}

// lead relays while the lease holds and ctx lasts, renewing the lease
// every third of its TTL.
func (r *Relay) lead(ctx context.Context, lease lock.Lease) {
	work, cancel := lock.Join(ctx, lease)
	defer cancel()
	renewEvery := r.cfg.LeaseTTL / 3
	renewed := time.Now()
	backoff := newBackoff(r.cfg.MaxBackoff)
	for work.Err() == nil {
		if time.Since(renewed) >= renewEvery {
			at := time.Now()
			if err := lease.Extend(work, r.cfg.LeaseTTL); err != nil {
				if ctx.Err() == nil {
					r.log.Warn("seat relay: lost the relay lock", slog.Any("error", err))
				}
				return
			}
			renewed = at
		}
		n, err := r.Pass(work)
		switch {
		case err != nil:
			if work.Err() != nil {
				return
			}
			r.m.failures.Inc()
			wait := backoff.next()
			r.log.Warn("seat relay: pass failed; the changes stay in the outbox and are retried",
				slog.Any("error", err), slog.Duration("retry_in", wait))
			sleep(work, wait)
		case n >= r.cfg.BatchSize:
			backoff.reset() // more are waiting: at once
		default:
			backoff.reset()
			sleep(work, r.cfg.Interval)
		}
	}
}

// Pass relays up to BatchSize of the oldest pending changes: appends them,
// grouped by schedule in id order, then deletes them (and reclaims the
// space of every ReclaimEvery deleted). It returns how many it relayed. On
// error nothing is deleted that was not appended. One goroutine at a time
// may call Pass.
func (r *Relay) Pass(ctx context.Context) (int, error) {
	rows, err := r.outbox.Pending(ctx, r.cfg.BatchSize)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if _, err := r.stream.Append(ctx, group(rows)); err != nil {
		return 0, err
	}
	ids := make([]int64, len(rows))
	for i, row := range rows {
		ids[i] = row.Pos
	}
	if err := r.outbox.Delete(ctx, ids); err != nil {
		// Appended but not deleted: the next pass appends them again,
		// and the streams skip them by position.
		return 0, err
	}
	r.m.relayed.Add(float64(len(rows)))
	r.reclaimAfter(ctx, len(rows))
	return len(rows), nil
}

// group splits rows (in position order) by schedule, keeping the order
// within each schedule, schedules in the order of their first change.
func group(rows []reservation.SeatChange) []ScheduleChanges {
	var batches []ScheduleChanges
	index := map[int64]int{}
	for _, row := range rows {
		i, ok := index[row.ScheduleID]
		if !ok {
			i = len(batches)
			index[row.ScheduleID] = i
			batches = append(batches, ScheduleChanges{ScheduleID: row.ScheduleID})
		}
		batches[i].Changes = append(batches[i].Changes,
			Change{Pos: row.Pos, SeatID: row.SeatID, Status: row.Status})
	}
	return batches
}

// EnforceBound deletes the oldest pending changes beyond MaxBacklog, so a
// relay stopped for long cannot fill the disk, and returns how many it
// dropped; drops are counted and logged as errors: those changes never
// reach the live seat map (the next snapshot has them).
func (r *Relay) EnforceBound(ctx context.Context) (int64, error) {
	dropped, err := r.outbox.Trim(ctx, r.cfg.MaxBacklog)
	if dropped > 0 {
		r.m.dropped.Add(float64(dropped))
		r.log.ErrorContext(ctx, "seat relay: outbox over its bound; oldest seat changes dropped, never streamed",
			slog.Int64("dropped", dropped), slog.Int64("bound", r.cfg.MaxBacklog))
	}
	return dropped, err
}

// backoff doubles from minBackoff up to a cap.
type backoff struct {
	cur, limit time.Duration
}

func newBackoff(limit time.Duration) *backoff { return &backoff{limit: max(limit, minBackoff)} }

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = minBackoff
	} else {
		b.cur = min(2*b.cur, b.limit)
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }
