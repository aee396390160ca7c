// Package reservation holds the booking domain and its use cases. It declares
// the Repository port it needs and consumes the lock port (lock.Locker); it
// knows nothing of HTTP, SQL or Redis.
package reservation

import (
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
	// can keep a seat locked.
	LockTTL time.Duration
	// SealBooked makes a booking seal its seat's lock key (lock.Lease.Seal)
	// once PostgreSQL has the reservation, so that every later request for
	// the seat is refused with ErrSeatTaken by the lock store alone, with
	// no query. Off, a booked seat is found taken by a query under its
	// lock, as the plain flow does.
	SealBooked bool
	// SealTTL is how long a seal lasts; after it the next request for the
	// seat queries PostgreSQL once and seals it again.
	SealTTL time.Duration
	// Schedules keeps the schedules in memory; give the booking and the
	// hold use cases the same one, so that each schedule is read once. Nil:
	// a cache of their own of DefaultScheduleCacheSize.
	Schedules *ScheduleCache
	// Events is told of every seat change; nil tells nobody.
	Events SeatEvents
}

// Service runs the booking use cases.
type Service struct {
	repo       Repository
	schedules  *ScheduleCache
	locker     lock.Locker
	lockTTL    time.Duration
	sealBooked bool
	sealTTL    time.Duration
	events     SeatEvents
	log        *slog.Logger
}

// NewService wires the use cases to their ports. A nil logger discards.
func NewService(repo Repository, locker lock.Locker, cfg Config, logger *slog.Logger) *Service {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.SealTTL <= 0 {
		cfg.SealTTL = DefaultSealTTL
	}
	if cfg.Schedules == nil {
		cfg.Schedules = NewScheduleCache(repo, DefaultScheduleCacheSize)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Events == nil {
		cfg.Events = noEvents{}
	}
	return &Service{
		repo: repo, schedules: cfg.Schedules, locker: locker,
		lockTTL: cfg.LockTTL, sealBooked: cfg.SealBooked, sealTTL: cfg.SealTTL, events: cfg.Events, log: logger,
	}
}
