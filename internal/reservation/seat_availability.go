package reservation

import (
	"context"
	"errors"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// markTTL is how long this instance keeps a seat it saw taken, held or
// locked out of its choices: longer than the seat's change takes to reach
// the image.
const markTTL = 2 * time.Second

// viewCacheSize is how many schedules' views an instance keeps.
const viewCacheSize = 1000

// SeatImages is the port through which best available reads this
// instance's images of the schedules' seats, and the use cases show on
// them the changes they commit until their seat events arrive
// (seatmap.Images).
type SeatImages interface {
	// Occupancy returns the schedule's image, loaded if none is kept.
	Occupancy(ctx context.Context, schedule Schedule) (Occupancy, error)
	Expect(scheduleID int64, seats []int, status SeatStatus)
}

// Occupancy is an image as best available reads it (a *seatmap.Image):
// ReadOccupied calls read, the image held still, with whether each seat
// is held or reserved as it shows at now.
type Occupancy interface {
	ReadOccupied(now time.Time, read func(occupied func(seat int) bool))
}

// expect shows seats of schedule with status on this instance's image of
// it (SeatImages.Expect). Seats it frees are given back to this
// instance's choices of best seats first: one of them may have found a
// seat locked by the very change that freed it, and would keep it out of
// its choices for markTTL.
func (s *Service) expect(scheduleID int64, seats []int, status SeatStatus) {
	if status == SeatAvailable {
		s.availability.unmark(scheduleID, seats)
	}
	if s.images != nil {
		s.images.Expect(scheduleID, seats, status)
	}
}

// errNoSeatImages is best available asked of a Service made without
// Config.SeatImages: a wiring mistake, answered as an error, not a panic.
var errNoSeatImages = errors.New("reservation: best available needs Config.SeatImages")

// seatAvailability is what this instance knows of which seats are free:
// per schedule, its image (which shows this instance's own commits at
// once: its holds, bookings, releases, cancellations and expiries),
// overlaid with the seats its own requests are trying to hold, or found
// unavailable in the last markTTL (marks). Concurrent choices in this
// instance therefore spread over different seats instead of all trying
// the same best ones; choices in other instances are learned from the
// image (the seat events), or from their locks and commits, one failed
// attempt at a time.
type seatAvailability struct {
	images SeatImages
	views  *lru.Cache[int64, *seatView]
	mu     sync.Mutex // makes one view per schedule
}

func newSeatAvailability(images SeatImages) *seatAvailability {
	c, err := lru.New[int64, *seatView](viewCacheSize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &seatAvailability{images: images, views: c}
}

// seatView is one schedule's view; mu guards its marks, and is taken
// before the image's lock.
type seatView struct {
	mu    sync.Mutex
	image Occupancy
	// marks[id-1] is when seat id's mark ends (zero: none): weighing a
	// choice reads it for every seat, so it is a slice, not a map.
	marks []time.Time
}

// view returns the schedule's view, on its current image.
func (a *seatAvailability) view(ctx context.Context, schedule Schedule) (*seatView, error) {
	if a.images == nil {
		return nil, errNoSeatImages
	}
	image, err := a.images.Occupancy(ctx, schedule)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	v, ok := a.views.Get(schedule.ID())
	if !ok {
		v = &seatView{marks: make([]time.Time, schedule.SeatCount())}
		a.views.Add(schedule.ID(), v)
	}
	a.mu.Unlock()
	v.mu.Lock()
	v.image = image
	v.mu.Unlock()
	return v, nil
}

// unmark gives seats of schedule back to this instance's choices, if it
// has a view of it.
func (a *seatAvailability) unmark(scheduleID int64, seats []int) {
	if v, ok := a.views.Peek(scheduleID); ok {
		v.unmark(seats)
	}
}

// unmarkShown gives back to this instance's choices those of seats that
// v's image shows held or reserved: it shows them as they are.
func (v *seatView) unmarkShown(seats []int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.image.ReadOccupied(time.Now(), func(occupied func(seat int) bool) {
		for _, s := range seats {
			if s >= 1 && s <= len(v.marks) && occupied(s) {
				v.marks[s-1] = time.Time{}
			}
		}
	})
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
