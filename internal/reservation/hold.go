package reservation

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Limits of a hold.
const (
	// MaxHoldSeats is the most seats one hold may claim.
	MaxHoldSeats = 10
	// MinHoldTTL and MaxHoldTTL bound HOLD_TTL.
	MinHoldTTL = 10 * time.Second
	MaxHoldTTL = time.Hour
	// DefaultHoldTTL is how long a hold lives when HOLD_TTL is not set.
	DefaultHoldTTL = 10 * time.Minute
	// DefaultMaxHoldsPerUser is how many live holds one user may have when
	// MAX_HOLDS_PER_USER is not set: more than a buyer needs, few enough
	// that one account cannot hold a hall.
	DefaultMaxHoldsPerUser = 20
)

// HoldStatus is where a hold stands.
type HoldStatus string

const (
	HoldActive    HoldStatus = "active"
	HoldConfirmed HoldStatus = "confirmed"
	HoldReleased  HoldStatus = "released"
	// HoldExpired is a hold whose time ran out unconfirmed; its seats are
	// free from that moment, whether or not a clean-up ran.
	HoldExpired HoldStatus = "expired"
)

// Hold is a claim of one user on a few seats of one schedule, for a
// limited time, to be confirmed (booked) or released.
type Hold struct {
	id         uuid.UUID
	scheduleID int64
	seatIDs    []int
	userID     string
	createdAt  time.Time
	expiresAt  time.Time
	status     HoldStatus
}

// RestoreHold rebuilds a stored hold. Only repositories call it; status is
// decided by the store's clock when the hold was read.
func RestoreHold(id uuid.UUID, scheduleID int64, seatIDs []int, userID string,
	createdAt, expiresAt time.Time, status HoldStatus) Hold {
	return Hold{id: id, scheduleID: scheduleID, seatIDs: seatIDs, userID: userID,
		createdAt: createdAt, expiresAt: expiresAt, status: status}
}

func (h Hold) ID() uuid.UUID        { return h.id }
func (h Hold) ScheduleID() int64    { return h.scheduleID }
func (h Hold) SeatIDs() []int       { return slices.Clone(h.seatIDs) }
func (h Hold) UserID() string       { return h.userID }
func (h Hold) CreatedAt() time.Time { return h.createdAt }
func (h Hold) ExpiresAt() time.Time { return h.expiresAt }
func (h Hold) Status() HoldStatus   { return h.status }

// OwnedBy reports whether userID made this hold.
func (h Hold) OwnedBy(userID string) bool { return h.userID == userID }

// HoldCommand asks to hold seats of one schedule for one user.
type HoldCommand struct {
	ScheduleID int64
	SeatIDs    []int
	UserID     string
	// Claim is the request's idempotency claim (uuid.Nil: none), stored
	// with the hold.
	Claim uuid.UUID
	// Resumed: Claim is an earlier request's, whose answer was lost; if
	// that request made a hold, the hold is the answer.
	Resumed bool
}

// Validate reports, as *InvalidError values joined in one error, every
// part of c that no hold may have: no user, a seat list that is empty,
// longer than MaxHoldSeats or repeats a seat, a seat below 1 (named
// seatIds[i], i its place in the list).
func (c HoldCommand) Validate() error {
	var errs []error
	if c.UserID == "" {
		errs = append(errs, &InvalidError{Field: "userId", Detail: "is required"})
	}
	sorted := slices.Sorted(slices.Values(c.SeatIDs))
	switch {
	case len(c.SeatIDs) < 1 || len(c.SeatIDs) > MaxHoldSeats:
		errs = append(errs, &InvalidError{Field: "seatIds", Detail: fmt.Sprintf("must list 1 to %d seats", MaxHoldSeats)})
	case len(slices.Compact(sorted)) != len(c.SeatIDs):
		errs = append(errs, &InvalidError{Field: "seatIds", Detail: "must not repeat a seat"})
	default:
		for i, seat := range c.SeatIDs {
			if seat < 1 {
				errs = append(errs, &InvalidError{Field: fmt.Sprintf("seatIds[%d]", i), Detail: "must be at least 1"})
			}
		}
	}
	return errors.Join(errs...)
}
