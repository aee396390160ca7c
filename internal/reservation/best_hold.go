package reservation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/lock"
)

// Limits of a best-available hold.
const (
	// MaxBestAttempts bounds the attempts of one best-available hold: a
	// choice whose seats turn out locked, held or taken is followed by
	// the next choice, this many times in all.
	MaxBestAttempts = 5
	// bestCandidates is how many disjoint choices are weighed at once;
	// concurrent requests pick among the near-equal ones at random.
	bestCandidates = 8
)

// BestHoldCommand asks to hold the best available Quantity seats of a
// schedule for one user.
type BestHoldCommand struct {
	ScheduleID int64
	Quantity   int
	// Category limits the seats to rows of that category; "" is any.
	Category string
	// Section limits the seats to the section of that name; "" is the
	// best sections that have them.
	Section string
	// Adjacent asks for consecutive seats of one row.
	Adjacent bool
	UserID   string
	// Claim and Resumed are the request's idempotency claim, as for
	// HoldCommand.
	Claim   uuid.UUID
	Resumed bool
}

// Validate reports, as *InvalidError values joined in one error, every
// part of c that no hold may have: no user, a quantity outside
// 1..MaxHoldSeats, a category that is no short name.
func (c BestHoldCommand) Validate() error {
	var errs []error
	if c.UserID == "" {
		errs = append(errs, &InvalidError{Field: "userId", Detail: "is required"})
	}
	if c.Quantity < 1 || c.Quantity > MaxHoldSeats {
		errs = append(errs, &InvalidError{Field: "quantity", Detail: fmt.Sprintf("must be between 1 and %d", MaxHoldSeats)})
	}
	if c.Category != "" && (utf8.RuneCountInString(c.Category) > MaxCategoryRunes || !isShortName(c.Category, true)) {
		errs = append(errs, &InvalidError{Field: "category", Detail: fmt.Sprintf("must be at most %d letters, digits, '-' or '_'", MaxCategoryRunes)})
	}
	if c.Section != "" && (utf8.RuneCountInString(c.Section) > MaxSectionNameRunes || !isShortName(c.Section, false)) {
		errs = append(errs, &InvalidError{Field: "section", Detail: fmt.Sprintf("must be at most %d letters, digits or '-'", MaxSectionNameRunes)})
	}
	return errors.Join(errs...)
}

// NotEnoughSeatsError refuses a best-available hold that no choice of
// seats can satisfy: Available is how many seats of the category (of any,
// when Category is "") and the section (of any, when Section is "") are
// free as far as the service knows.
type NotEnoughSeatsError struct {
	Quantity  int
	Category  string
	Section   string
	Adjacent  bool
	Available int
}

func (e *NotEnoughSeatsError) Error() string {
	return fmt.Sprintf("reservation: not enough seats for %d (%d available)", e.Quantity, e.Available)
}

// Is makes errors.Is(err, ErrNotEnoughSeats) true for a *NotEnoughSeatsError.
func (e *NotEnoughSeatsError) Is(target error) bool { return target == ErrNotEnoughSeats }

// ErrNotEnoughSeats is what every *NotEnoughSeatsError is (errors.Is).
var ErrNotEnoughSeats = errors.New("reservation: not enough seats")

// ErrSeatsContended refuses a best-available hold whose every attempt
// found its seats taken by concurrent requests first; seats remain, and a
// retry may get some.
var ErrSeatsContended = errors.New("reservation: the chosen seats were taken by concurrent requests")

// HoldBest holds the best available seats for cmd (best_seats.go says
// what best means), all of them or none, and says how many choices it
// tried (0 when none could be made). Each attempt picks among the near-equal best choices at random, so
// that concurrent requests spread over different seats, and takes the
// choice's locks in one call and its hold in one transaction, as Hold
// does; a choice found locked, held or taken is followed by the next, up
// to MaxBestAttempts.
//
// Errors: *InvalidError (command, or a category the schedule does not
// have), ErrScheduleNotFound, *NotEnoughSeatsError, ErrSeatsContended,
// ErrTooManyHolds, ErrUnavailable, or ctx's error.
func (s *Service) HoldBest(ctx context.Context, cmd BestHoldCommand) (Held, int, error) {
	if err := cmd.Validate(); err != nil {
		return Held{}, 0, err
	}
	if h, found, err := s.resumedHold(ctx, cmd.Claim, cmd.Resumed, cmd.UserID); found || err != nil {
		return Held{Hold: h, Recovered: found}, 0, err
	}
	h, attempts, err := s.holdBest(ctx, cmd)
	return Held{Hold: h}, attempts, err
}

// holdBest is HoldBest past the claim's look-up.
func (s *Service) holdBest(ctx context.Context, cmd BestHoldCommand) (Hold, int, error) {
	schedule, err := s.schedules.schedule(ctx, cmd.ScheduleID)
	if err != nil {
		return Hold{}, 0, fmt.Errorf("load schedule: %w", err)
	}
	layout := schedule.Layout()
	if cmd.Category != "" && !layout.HasCategory(cmd.Category) {
		return Hold{}, 0, &InvalidError{Field: "category", Detail: "is not a category of this schedule"}
	}
	section := AnySection
	if cmd.Section != "" {
		i, ok := layout.SectionIndex(cmd.Section)
		if !ok {
			return Hold{}, 0, &InvalidError{Field: "section", Detail: "is not a section of this schedule"}
		}
		section = i
	}
	view, err := s.availability.view(ctx, schedule)
	if err != nil {
		return Hold{}, 0, fmt.Errorf("load the seats' availability: %w", err)
	}
	for attempt := 1; attempt <= MaxBestAttempts; attempt++ {
		seats, available := pickBest(view, layout, cmd, section)
		if seats == nil { // no choice left to try: attempt-1 were tried
			return Hold{}, attempt - 1, &NotEnoughSeatsError{Quantity: cmd.Quantity, Category: cmd.Category, Section: cmd.Section, Adjacent: cmd.Adjacent, Available: available}
		}
		h, err := s.holdSeats(ctx, HoldCommand{ScheduleID: cmd.ScheduleID, SeatIDs: seats, UserID: cmd.UserID, Claim: cmd.Claim}, seats)
		var (
			held    *lock.HeldError
			refused *SeatsUnavailableError
		)
		switch {
		case err == nil:
			// The image shows the hold from its commit on (holdSeats
			// expects it there), so the seats need no mark: a release,
			// cancellation or expiry on this instance frees them for
			// the next choice at once. An image no longer kept (dropped
			// or replaced meanwhile) got no expectation and shows them
			// free: the marks stay, and end by themselves.
			view.unmarkShown(seats)
			return h, attempt, nil
		case errors.As(err, &held):
			keySeat := seatsByLockKey(cmd.ScheduleID, seats)
			locked := make([]int, 0, len(held.Keys))
			for _, k := range held.Keys {
				if seat, ok := keySeat[k.Key]; ok {
					locked = append(locked, seat)
				}
			}
			view.remark(seats, locked)
		case errors.As(err, &refused):
			gone := make([]int, len(refused.Seats))
			for i, u := range refused.Seats {
				gone[i] = u.SeatID
			}
			view.remark(seats, gone)
		default:
			view.unmark(seats)
			return Hold{}, attempt, err
		}
		if err := ctx.Err(); err != nil {
			return Hold{}, attempt, err
		}
	}
	return Hold{}, MaxBestAttempts, ErrSeatsContended
}

// pickBest picks cmd's seats among the near-equal best choices of view,
// at random, and marks them, so that this instance's next choices avoid
// them; nil when there is no choice, with the number of free seats.
func pickBest(view *seatView, layout Layout, cmd BestHoldCommand, section int) (seats []int, available int) {
	category := cmd.Category
	view.mu.Lock()
	defer view.mu.Unlock()
	now := time.Now()
	var blocks []Block
	view.image.ReadOccupied(now, func(occupied func(seat int) bool) {
		// Free as far as this instance knows: not occupied, not marked.
		free := func(seat int) bool { return !occupied(seat) && !view.marks[seat-1].After(now) }
		if blocks = BestBlocksIn(layout, free, cmd.Quantity, category, section, cmd.Adjacent, bestCandidates); len(blocks) == 0 {
			available = FreeSeatsIn(layout, free, category, section)
		}
	})
	if len(blocks) == 0 {
		return nil, available
	}
	// Near-equal: of the best choice's tier, stranding no more seats.
	best := blocks[0]
	near := blocks[:1]
	for _, b := range blocks[1:] {
		if b.Strands <= best.Strands && int(b.Distance/tierWidth) == int(best.Distance/tierWidth) {
			near = append(near, b)
		}
	}
	chosen := near[rand.IntN(len(near))].Seats
	for _, seat := range chosen {
		view.marks[seat-1] = now.Add(markTTL)
	}
	return chosen, 0
}

// remark ends an attempt that failed on some of its seats: those stay out
// of this instance's choices for a while (their locks, holds or bookings
// will show in the next reload), the others are given back.
func (v *seatView) remark(attempted, unavailable []int) {
	v.unmark(attempted)
	v.mark(unavailable, time.Now().Add(markTTL))
}
