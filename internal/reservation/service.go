// Package reservation holds the booking domain and its use cases. It declares
// the Repository port it needs and consumes the lock port (lock.Locker and
// lock.MultiLocker); it knows nothing of HTTP, SQL or Redis.
package reservation

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
)

// Defaults of Config.
const (
	// DefaultLockTTL is the lease of a seat lock.
	DefaultLockTTL = 5 * time.Second
	// DefaultSealTTL is how long a booked seat's lock key stays sealed.
	DefaultSealTTL = 24 * time.Hour
)

// Config tunes the use cases. Zero values take the defaults.
type Config struct {
	// LockTTL is the lease of a seat lock: the longest a crashed booking
	// or hold can keep a seat locked.
	LockTTL time.Duration
	// SealBooked makes a booking seal its seat's lock key (lock.Sealer)
	// once PostgreSQL has the reservation, so that every later request for
	// the seat is refused with ErrSeatTaken by the lock store alone, with
	// no query. Off, each request for a booked seat takes its lock and
	// learns from PostgreSQL that the seat is taken.
	SealBooked bool
	// SealTTL is how long a seal lasts; after it the next request for the
	// seat queries PostgreSQL once and seals it again.
	SealTTL time.Duration
	// HoldTTL is how long a hold lives (HOLD_TTL).
	HoldTTL time.Duration
	// MaxHoldsPerUser caps a user's live holds (MAX_HOLDS_PER_USER).
	MaxHoldsPerUser int
	// HoldMaxLifetime caps how long after its making an extended hold may
	// live (HOLD_MAX_LIFETIME); zero: DefaultHoldMaxLifetime, or HoldTTL
	// when that is longer.
	HoldMaxLifetime time.Duration
	// WriteTimeout bounds each write under seat locks; zero:
	// DefaultWriteTimeout. A store that rides out a switchover of its
	// primary wants the switchover's gap inside it
	// (postgres.WriteTimeout).
	WriteTimeout time.Duration
	// SeatImages are this instance's images of the schedules' seats, which
	// best available reads (seatmap.Images). HoldBest needs them; the
	// other use cases run without (nil), showing their changes on none.
	SeatImages SeatImages
}

// SeatLocker takes one seat's lock or several at once: what the use cases
// need of the lock port (lock.Client is one).
type SeatLocker interface {
	lock.Locker
	lock.MultiLocker
}

// Service runs the use cases: schedules, one-click bookings, holds and
// their checkout, cancellations.
type Service struct {
	repo       Repository
	schedules  *scheduleCache
	locker     SeatLocker
	lockTTL    time.Duration
	sealBooked bool
	sealTTL    time.Duration
	holdTTL    time.Duration
	maxHolds   int
	holdLife   time.Duration
	// writeTimeout bounds each write under seat locks (storeWrite).
	writeTimeout time.Duration
	log          *slog.Logger
	// availability is this instance's view of free seats, for choices of
	// best seats.
	availability *seatAvailability
	images       SeatImages
}

// NewService wires the use cases to their ports. A nil logger discards.
func NewService(repo Repository, locker SeatLocker, cfg Config, logger *slog.Logger) *Service {
	s := &Service{
		repo: repo, schedules: newScheduleCache(repo), locker: locker,
		lockTTL: orDefault(cfg.LockTTL, DefaultLockTTL), sealBooked: cfg.SealBooked,
		sealTTL: orDefault(cfg.SealTTL, DefaultSealTTL), holdTTL: orDefault(cfg.HoldTTL, DefaultHoldTTL),
		maxHolds: orDefault(cfg.MaxHoldsPerUser, DefaultMaxHoldsPerUser), log: logger,
		writeTimeout: orDefault(cfg.WriteTimeout, DefaultWriteTimeout),
	}
	s.images = cfg.SeatImages
	s.availability = newSeatAvailability(s.images)
	s.holdLife = orDefault(cfg.HoldMaxLifetime, max(DefaultHoldMaxLifetime, s.holdTTL))
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

func orDefault[T time.Duration | int](v, fallback T) T {
	if v > 0 {
		return v
	}
	return fallback
}

// releaser is a lease of one key (lock.Lease) or of several
// (lock.MultiLease).
type releaser interface {
	Release(ctx context.Context) error
}

// endLease ends a lease once the outcome of the work it guarded is
// decided: sealed when seal is set and the lease can seal (lock.Sealer),
// released otherwise. A failure is logged, never returned, and the lock
// expires by itself. A lease lost before its end (lock.ErrNotHeld) is a
// warning: the work outlived it, the fences kept the data right, but
// LOCK_TTL is too short for this load.
func (s *Service) endLease(ctx context.Context, lease releaser, seal bool) {
	s.endLeaseWithNote(ctx, lease, seal, "")
}

// endLeaseWithNote is endLease whose seal carries note (lock.Sealer).
func (s *Service) endLeaseWithNote(ctx context.Context, lease releaser, seal bool, note string) {
	var err error
	if sealer, canSeal := lease.(lock.Sealer); seal && canSeal {
		err = sealer.SealWithNote(ctx, s.sealTTL, note)
	} else {
		err = lease.Release(ctx)
	}
	if err == nil {
		return
	}
	var keys slog.Attr
	switch l := lease.(type) {
	case lock.Lease:
		keys = slog.String("key", l.Key())
	case lock.MultiLease:
		keys = slog.Any("keys", l.Keys())
	}
	if errors.Is(err, lock.ErrNotHeld) {
		s.log.WarnContext(ctx, "seat lock expired before release", keys)
		return
	}
	s.log.ErrorContext(ctx, "release seat lock", keys, slog.Any("error", err))
}
