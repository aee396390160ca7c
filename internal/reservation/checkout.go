package reservation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
)

// CheckoutConfig tunes the hold use cases. Zero values take the defaults.
type CheckoutConfig struct {
	// LockTTL is the lease of the seat locks taken while a hold is made.
	LockTTL time.Duration
	// HoldTTL is how long a hold lives (HOLD_TTL).
	HoldTTL time.Duration
	// ScheduleCacheSize is how many schedules are kept in memory.
	ScheduleCacheSize int
}

// Checkout runs the hold use cases: hold seats, confirm, release.
type Checkout struct {
	repo      HoldRepository
	schedules *scheduleCache
	locker    lock.MultiLocker
	lockTTL   time.Duration
	holdTTL   time.Duration
	log       *slog.Logger
}

// NewCheckout wires the hold use cases to their ports. A nil logger
// discards.
func NewCheckout(repo HoldRepository, locker lock.MultiLocker, cfg CheckoutConfig, logger *slog.Logger) *Checkout {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.HoldTTL <= 0 {
		cfg.HoldTTL = DefaultHoldTTL
	}
	if cfg.ScheduleCacheSize <= 0 {
		cfg.ScheduleCacheSize = DefaultScheduleCacheSize
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Checkout{
		repo: repo, schedules: newScheduleCache(repo, cfg.ScheduleCacheSize), locker: locker,
		lockTTL: cfg.LockTTL, holdTTL: cfg.HoldTTL, log: logger,
	}
}

// Hold claims every seat of cmd for cmd.UserID, or none. The seats' locks
// are taken in one atomic call of the lock store; under them PostgreSQL
// checks that no seat is reserved or held by an unexpired hold and stores
// the hold with the locks' fences, in one transaction; then the locks are
// released, always: from then on the hold itself keeps the seats, in
// PostgreSQL, until it is confirmed, released or expires.
//
// Errors: *InvalidError (seat list), ErrScheduleNotFound, ErrSeatNotFound,
// *SeatsUnavailableError (every seat that is locked, held or taken),
// ErrUnavailable, or ctx's error.
func (c *Checkout) Hold(ctx context.Context, cmd HoldCommand) (Hold, error) {
	if cmd.UserID == "" {
		return Hold{}, &InvalidError{Field: "userId", Detail: "is required"}
	}
	seats, err := cmd.seats()
	if err != nil {
		return Hold{}, err
	}
	schedule, err := c.schedules.schedule(ctx, cmd.ScheduleID)
	if err != nil {
		return Hold{}, fmt.Errorf("load schedule: %w", err)
	}
	keySeat := make(map[string]int, len(seats))
	keys := make([]string, len(seats))
	for i, seat := range seats {
		if !schedule.HasSeat(seat) {
			return Hold{}, ErrSeatNotFound
		}
		keys[i] = SeatLockKey(cmd.ScheduleID, seat)
		keySeat[keys[i]] = seat
	}

	lease, err := c.locker.AcquireAll(ctx, keys, lock.Options{TTL: c.lockTTL})
	if err != nil {
		var held *lock.HeldError
		if errors.As(err, &held) {
			return Hold{}, c.unavailable(ctx, cmd.ScheduleID, seats, held, keySeat)
		}
		return Hold{}, lockError(err)
	}
	defer func() {
		if err := lease.Release(ctx); err != nil && !errors.Is(err, lock.ErrNotHeld) {
			c.log.ErrorContext(ctx, "release hold seat locks", slog.Any("error", err))
		}
	}()
	if err := ctx.Err(); err != nil {
		return Hold{}, fmt.Errorf("before insert: %w", err)
	}
	// The lease's keys are sorted as strings ("seat:10" before "seat:2"):
	// the fences follow them, not the seats' numeric order.
	fences := make([]int64, len(seats))
	for i, key := range lease.Keys() {
		fences[slices.Index(seats, keySeat[key])] = lease.Fences()[i]
	}
	h, err := c.repo.InsertHold(ctx, NewHold{
		ScheduleID: cmd.ScheduleID, SeatIDs: seats, Fences: fences, UserID: cmd.UserID, TTL: c.holdTTL,
	})
	if err != nil {
		return Hold{}, fmt.Errorf("insert hold: %w", err)
	}
	return h, nil
}

// unavailable explains a hold refused because some seat locks were held:
// PostgreSQL tells which seats are taken or held (a booked seat's lock key
// may be sealed, which the lock store reports as held), and the other
// locked seats are "locked", with their holders' remaining TTL. Seats that
// were free of locks are listed too when PostgreSQL says they are taken or
// held, so the client learns everything in one answer.
func (c *Checkout) unavailable(ctx context.Context, scheduleID int64, seats []int, held *lock.HeldError, keySeat map[string]int) error {
	known, err := c.repo.UnavailableSeats(ctx, scheduleID, seats)
	if err != nil {
		return fmt.Errorf("seats held by locks, and could not say why: %w", err)
	}
	bySeat := make(map[int]UnavailableSeat, len(known)+len(held.Keys))
	for _, k := range held.Keys {
		seat := keySeat[k.Key]
		bySeat[seat] = UnavailableSeat{SeatID: seat, Reason: ReasonLocked, RetryAfter: max(k.Remaining, time.Second)}
	}
	for _, u := range known {
		bySeat[u.SeatID] = u
	}
	out := &SeatsUnavailableError{}
	for _, seat := range seats {
		if u, ok := bySeat[seat]; ok {
			out.Seats = append(out.Seats, u)
		}
	}
	return out
}

// HoldByID returns a hold to its owner; anyone else gets ErrHoldNotFound,
// exactly as for an unknown id.
func (c *Checkout) HoldByID(ctx context.Context, id uuid.UUID, userID string) (Hold, error) {
	h, err := c.repo.Hold(ctx, id)
	if err != nil {
		if errors.Is(err, ErrHoldNotFound) {
			return Hold{}, ErrHoldNotFound
		}
		return Hold{}, fmt.Errorf("load hold: %w", err)
	}
	if !h.OwnedBy(userID) {
		return Hold{}, ErrHoldNotFound
	}
	return h, nil
}

// Confirm books every seat of the user's hold at once and returns the
// reservations; confirming a confirmed hold returns the same ones. No seat
// lock is needed: the hold's claims in PostgreSQL keep every other booking
// off its seats, and the UNIQUE constraint has the last word.
//
// Errors: ErrHoldNotFound, ErrHoldExpired, ErrHoldReleased,
// *SeatsUnavailableError, ErrUnavailable.
func (c *Checkout) Confirm(ctx context.Context, id uuid.UUID, userID string) ([]Reservation, error) {
	rs, err := c.repo.ConfirmHold(ctx, id, userID)
	if err != nil {
		return nil, fmt.Errorf("confirm hold: %w", err)
	}
	return rs, nil
}

// Release frees the seats of the user's hold at once. Releasing again, or
// releasing an expired hold, succeeds. Errors: ErrHoldNotFound,
// ErrHoldConfirmed, ErrUnavailable.
func (c *Checkout) Release(ctx context.Context, id uuid.UUID, userID string) error {
	if err := c.repo.ReleaseHold(ctx, id, userID); err != nil {
		return fmt.Errorf("release hold: %w", err)
	}
	return nil
}
