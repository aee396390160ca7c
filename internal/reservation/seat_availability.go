package reservation

import (
	"context"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// availabilityMaxAge is how old a schedule's view of its occupied seats
// may be before a choice of best seats reloads it. A stale view only costs
// an attempt: the seat locks and PostgreSQL have the last word on every
// seat a choice picks.
const availabilityMaxAge = 100 * time.Millisecond

// markTTL is how long this instance keeps a seat it saw taken, held or
// locked out of its choices: longer than a reload takes to show it.
const markTTL = 2 * time.Second

// availabilityCacheSize is how many schedules' views an instance keeps.
const availabilityCacheSize = 1000

// seatAvailability is what this instance knows of which seats are free:
// per schedule, the occupied seats PostgreSQL listed at most
// availabilityMaxAge ago, overlaid with the seats its own requests picked
// or found unavailable since (marks). Concurrent choices in this instance
// therefore spread over different seats instead of all trying the same
// best ones; choices in other instances are learned from their locks and
// commits, one failed attempt at a time.
type seatAvailability struct {
	repo    SeatStore
	views   *lru.Cache[int64, *seatView]
	loading singleflight.Group
}

func newSeatAvailability(repo SeatStore) *seatAvailability {
	c, err := lru.New[int64, *seatView](availabilityCacheSize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &seatAvailability{repo: repo, views: c}
}

// seatView is one schedule's view; mu guards all of it.
type seatView struct {
	mu       sync.Mutex
	loadedAt time.Time
	occupied []bool // occupied[id-1]: reserved or held, as last loaded
	// marks[id-1] is when seat id's mark ends (zero: none): weighing a
	// choice reads it for every seat, so it is a slice, not a map.
	marks []time.Time
	// reloading is set while a reload is under way.
	reloading bool
}

// view returns the schedule's view, loading it when this instance has
// none; a view older than availabilityMaxAge is reloaded in the
// background, and used meanwhile.
func (a *seatAvailability) view(ctx context.Context, schedule Schedule) (*seatView, error) {
	if v, ok := a.views.Get(schedule.ID()); ok {
		v.mu.Lock()
		stale := !v.reloading && time.Since(v.loadedAt) > availabilityMaxAge
		if stale {
			v.reloading = true
		}
		v.mu.Unlock()
		if stale {
			go a.reload(context.WithoutCancel(ctx), schedule, v)
		}
		return v, nil
	}
	ch := a.loading.DoChan(strconv.FormatInt(schedule.ID(), 10), func() (any, error) {
		// A load that finished between this caller's miss and its flight
		// made the view already: a second view would not know the first
		// one's marks, and its requests would pick the same seats.
		if v, ok := a.views.Get(schedule.ID()); ok {
			return v, nil
		}
		v := &seatView{marks: make([]time.Time, schedule.SeatCount())}
		if err := a.load(context.WithoutCancel(ctx), schedule, v); err != nil {
			return nil, err
		}
		a.views.Add(schedule.ID(), v)
		return v, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*seatView), nil
	}
}

func (a *seatAvailability) reload(ctx context.Context, schedule Schedule, v *seatView) {
	_ = a.load(ctx, schedule, v) // a failed reload keeps the old view: the next choice tries again
	v.mu.Lock()
	v.reloading = false
	v.mu.Unlock()
}

// load replaces v's occupied seats with PostgreSQL's list.
func (a *seatAvailability) load(ctx context.Context, schedule Schedule, v *seatView) error {
	ctx, cancel := context.WithTimeout(ctx, scheduleLookupTimeout)
	defer cancel()
	started := time.Now()
	seats, err := a.repo.OccupiedSeats(ctx, schedule.ID())
	if err != nil {
		return err
	}
	occupied := make([]bool, schedule.SeatCount())
	for _, s := range seats {
		if schedule.HasSeat(s.ID) {
			occupied[s.ID-1] = true
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.occupied, v.loadedAt = occupied, started
	return nil
}

// free reports whether seat is free as far as v knows; v.mu must be held.
func (v *seatView) free(now time.Time) func(seat int) bool {
	return func(seat int) bool {
		return !v.occupied[seat-1] && !v.marks[seat-1].After(now)
	}
}

// mark keeps seats out of this instance's choices until until.
func (v *seatView) mark(seats []int, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range seats {
		if s >= 1 && s <= len(v.marks) && until.After(v.marks[s-1]) {
			v.marks[s-1] = until
		}
	}
}

// unmark gives seats back to this instance's choices.
func (v *seatView) unmark(seats []int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range seats {
		if s >= 1 && s <= len(v.marks) {
			v.marks[s-1] = time.Time{}
		}
	}
}
