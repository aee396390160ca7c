package reservation

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// pollingMaxAge is how old a polled image may be before it is read from
// PostgreSQL again (in the background: the caller gets it as it is).
const pollingMaxAge = 100 * time.Millisecond

// pollingMaxStale is how old a polled image may be and still be answered
// while it is read again: an older one (nobody asked for it lately) waits
// for its listing, or its first reader would see seats as they were when
// it was last asked for, however long ago.
const pollingMaxStale = time.Second

// imageCacheSize is how many schedules' images an instance keeps.
const imageCacheSize = 1000

// pollingImages keeps images by listing each schedule's occupied seats
// again when one is asked for more than pollingMaxAge after its last
// listing: for an instance without the seat feed (no Redis), and while
// the feed cannot be followed. A version is a listing that changed
// something; the stamp, random for each provider, keeps its tags from
// ever naming another instance's state.
type pollingImages struct {
	repo    OccupiedSeatLister
	stamp   string
	images  *lru.Cache[int64, *polledImage]
	loading singleflight.Group
}

type polledImage struct {
	image     *SeatImage
	mu        sync.Mutex
	loadedAt  time.Time
	reloading bool
}

// NewPollingSeatImages returns images kept by reading repo.
func NewPollingSeatImages(repo OccupiedSeatLister) SeatImages {
	c, err := lru.New[int64, *polledImage](imageCacheSize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &pollingImages{repo: repo, images: c, stamp: "p" + strconv.FormatUint(rand.Uint64(), 36)}
}

// SeatImage returns the schedule's image, listing its seats when this
// instance has none or the one it has is older than pollingMaxStale; one
// older than pollingMaxAge is listed again in the background, and
// returned meanwhile.
func (p *pollingImages) SeatImage(ctx context.Context, schedule Schedule) (*SeatImage, error) {
	if e, ok := p.images.Get(schedule.ID()); ok {
		e.mu.Lock()
		age := time.Since(e.loadedAt)
		stale := !e.reloading && age > pollingMaxAge && age <= pollingMaxStale
		if stale {
			e.reloading = true
		}
		e.mu.Unlock()
		if stale {
			go p.reload(context.WithoutCancel(ctx), e)
		}
		if age <= pollingMaxStale {
			return e.image, nil
		}
	}
	ch := p.loading.DoChan(strconv.FormatInt(schedule.ID(), 10), func() (any, error) {
		// A load that finished between this caller's miss and its flight
		// made the image already: a second one would not be the one the
		// choices of best seats read.
		e, ok := p.images.Get(schedule.ID())
		if ok {
			e.mu.Lock()
			fresh := time.Since(e.loadedAt) <= pollingMaxStale
			e.mu.Unlock()
			if fresh {
				return e, nil
			}
		} else {
			e = &polledImage{image: NewSeatImage(schedule)}
		}
		if err := p.load(context.WithoutCancel(ctx), e); err != nil {
			return nil, err
		}
		p.images.Add(schedule.ID(), e)
		return e, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*polledImage).image, nil
	}
}

func (p *pollingImages) reload(ctx context.Context, e *polledImage) {
	_ = p.load(ctx, e) // a failed listing keeps the image: the next request tries again
	e.mu.Lock()
	e.reloading = false
	e.mu.Unlock()
}

func (p *pollingImages) load(ctx context.Context, e *polledImage) error {
	ctx, cancel := context.WithTimeout(ctx, scheduleLookupTimeout)
	defer cancel()
	started := time.Now()
	seats, err := p.repo.OccupiedSeats(ctx, e.image.schedule.ID())
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if started.Before(e.loadedAt) {
		return nil // a listing begun later (a reader that could not wait for this one) is shown already
	}
	e.image.replace(seats, p.stamp)
	e.loadedAt = started
	return nil
}

// Kept implements SeatImages.
func (p *pollingImages) Kept(scheduleID int64) *SeatImage {
	if e, ok := p.images.Peek(scheduleID); ok {
		return e.image
	}
	return nil
}
