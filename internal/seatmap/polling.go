package seatmap

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"github.com/seatlock/seatlock/internal/reservation"
)

// pollingMaxAge is how old a polled image may be before it is read from
// PostgreSQL again (in the background: the caller gets it as it is).
const pollingMaxAge = 100 * time.Millisecond

// pollingMaxStale is how old a polled image may be and still be answered
// while it is read again: an older one (nobody asked for it lately) waits
// for its listing, or its first reader would see seats as they were when
// it was last asked for, however long ago.
const pollingMaxStale = time.Second

// pollingCacheSize is how many schedules' polled images an instance keeps.
const pollingCacheSize = 1000

// polling keeps images by listing each schedule's occupied seats again
// when one is asked for more than pollingMaxAge after its last listing:
// for an instance without the seat feed (no Redis), and while the feed
// cannot be followed. A version is a listing that changed something; the
// stamp, random for each instance, keeps its tags from ever naming another
// instance's state.
type polling struct {
	source  Source
	stamp   string
	images  *lru.Cache[int64, *polledImage]
	loading singleflight.Group
}

type polledImage struct {
	image     *Image
	mu        sync.Mutex
	loadedAt  time.Time
	reloading bool
}

func newPolling(source Source) *polling {
	c, err := lru.New[int64, *polledImage](pollingCacheSize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &polling{source: source, images: c, stamp: "p" + strconv.FormatUint(rand.Uint64(), 36)}
}

// image returns the schedule's image, listing its seats when this
// instance has none or the one it has is older than pollingMaxStale; one
// older than pollingMaxAge is listed again in the background, and
// returned meanwhile.
func (p *polling) image(ctx context.Context, schedule reservation.Schedule) (*Image, error) {
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
	return loadOnce(ctx, &p.loading, schedule.ID(), func() (*Image, error) {
		// A load that finished between this caller's miss and its flight
		// made the image already: a second one would not be the one the
		// choices of best seats read.
		e, ok := p.images.Get(schedule.ID())
		if ok {
			e.mu.Lock()
			fresh := time.Since(e.loadedAt) <= pollingMaxStale
			e.mu.Unlock()
			if fresh {
				return e.image, nil
			}
		} else {
			e = &polledImage{image: NewImage(schedule)}
		}
		if err := p.load(context.WithoutCancel(ctx), e); err != nil {
			return nil, err
		}
		p.images.Add(schedule.ID(), e)
		return e.image, nil
	})
}

func (p *polling) reload(ctx context.Context, e *polledImage) {
	_ = p.load(ctx, e) // a failed listing keeps the image: the next request tries again
	e.mu.Lock()
	e.reloading = false
	e.mu.Unlock()
}

func (p *polling) load(ctx context.Context, e *polledImage) error {
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	started := time.Now()
	seats, err := p.source.OccupiedSeats(ctx, e.image.schedule.ID())
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

// kept returns the schedule's image if one is kept, and lists none.
func (p *polling) kept(scheduleID int64) *Image {
	if e, ok := p.images.Peek(scheduleID); ok {
		return e.image
	}
	return nil
}
