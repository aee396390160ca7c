// Package reservation holds the booking domain and its use cases. It declares
// the Repository port it needs and consumes the lock port (lock.Locker); it
// knows nothing of HTTP, SQL or Redis.
package reservation

import (
	"log/slog"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
)

// DefaultLockTTL is the lease of a seat lock when Config leaves it zero.
const DefaultLockTTL = 5 * time.Second

// Config tunes the use cases.
type Config struct {
	// LockTTL is the lease of a seat lock: the longest a crashed booking
	// can keep a seat locked.
	LockTTL time.Duration
}

// Service runs the booking use cases.
type Service struct {
	repo    Repository
	locker  lock.Locker
	lockTTL time.Duration
	log     *slog.Logger
}

// NewService wires the use cases to their ports. A nil logger discards.
func NewService(repo Repository, locker lock.Locker, cfg Config, logger *slog.Logger) *Service {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{repo: repo, locker: locker, lockTTL: cfg.LockTTL, log: logger}
}
