package seatmap

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// Source is what images are loaded from (a reservation.SeatStore).
type Source interface {
	OccupiedSeats(ctx context.Context, scheduleID int64) ([]reservation.OccupiedSeat, error)
}

// Images keeps this instance's images of the schedules' seats current by
// the seat events (reservation.SeatImages): an image is loaded once from
// PostgreSQL, at a known position of its schedule's stream, and from then
// on takes in every change the stream carries, so that reading the seat
// map or choosing best seats costs no query however large the venue. An
// image's version is its position's count of stream entries (Redis's
// entries-added), the same on every instance; its tag adds the id of the
// last entry.
//
// A gap in the events (the image's subscription fell behind) makes the
// next request load the image again. Without the feed (no Redis), or while
// it cannot be followed (Redis unreachable), images are listed from
// PostgreSQL instead (polling). An image nobody asked for in Config.Idle
// and nobody watches (a live seat-map stream of its schedule on this
// instance) is dropped, and its subscription with it; past Config.MaxBytes
// the least recently asked for are dropped as well (bound.go). Every
// second the kept images' counts of events are checked against their
// streams', all in one round trip (check): one that differs is loaded
// again.
type Images struct {
	feed    *seatfeed.Feed
	source  Source
	polling *polling
	cfg     Config

	mu   sync.Mutex
	kept map[int64]*followedImage
	// keptBytes is what the kept images weigh (weigh), held under
	// cfg.MaxBytes.
	keptBytes int64
	// rounds counts maintain's rounds, for tests to wait on.
	rounds  int
	loading singleflight.Group
	// unfollowableAt is when the feed last failed (unix nanoseconds): for
	// a second after, images are listed without trying it again, so that
	// an unreachable Redis does not slow every read of a seat map.
	unfollowableAt atomic.Int64
	stop           chan struct{}
	stopped        sync.WaitGroup
}

// retryFeedAfter is how long images are listed from PostgreSQL after the
// feed failed, before it is tried again.
const retryFeedAfter = time.Second

// loadTimeout bounds loading an image: listing its seats, reading its
// stream's position.
const loadTimeout = 5 * time.Second

// Defaults of Config.
const (
	DefaultIdle     = 2 * time.Minute
	DefaultBuffer   = 256
	DefaultMaxBytes = 64 << 20
)

// Config tunes Images. Zero values take the defaults.
type Config struct {
	// Idle is how long an image is kept without being asked for.
	Idle time.Duration
	// Buffer is how many batches of events an image's subscription may
	// fall behind before it is ended, and the image loaded again.
	Buffer int
	// MaxBytes bounds what the kept images weigh (weigh): past it, the
	// least recently asked for are dropped, the unwatched ones first.
	MaxBytes int64
	Logger   *slog.Logger
}

type followedImage struct {
	image *Image
	sub   *seatfeed.Subscription

	// bytes is what the image weighs (weigh).
	bytes int64

	mu     sync.Mutex
	usedAt time.Time
	broken bool // its subscription ended, or its count went wrong: load again
	checks int  // checks done, for tests to wait on
	// checked is the image's position (Image.Position) at its last check
	// that reached Redis, or at its load: an image still there is not
	// checked again (unchanged).
	checked position
	// retired is set when a load replaces this entry: its events, if any
	// are still on their way, must not reach the image again.
	retired  bool
	lastSeen string
}

// NewImages returns images kept by f (polled when f is nil), loaded from
// source. Close stops them.
func NewImages(f *seatfeed.Feed, source Source, cfg Config) *Images {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Images{feed: f, source: source, polling: newPolling(source), cfg: cfg,
		kept: map[int64]*followedImage{}, stop: make(chan struct{})}
	if f != nil {
		m.stopped.Add(1)
		go m.maintain()
	}
	return m
}

// Image returns the schedule's image, loading it when none is kept.
func (m *Images) Image(ctx context.Context, schedule reservation.Schedule) (*Image, error) {
	image, err := m.image(ctx, schedule)
	if err != nil {
		return nil, fmt.Errorf("load the seats' image: %w", err)
	}
	return image, nil
}

// Occupancy implements reservation.SeatImages (Image).
func (m *Images) Occupancy(ctx context.Context, schedule reservation.Schedule) (reservation.Occupancy, error) {
	image, err := m.image(ctx, schedule)
	if err != nil {
		return nil, err
	}
	return image, nil
}

func (m *Images) image(ctx context.Context, schedule reservation.Schedule) (*Image, error) {
	if m.feed == nil {
		return m.polling.image(ctx, schedule)
	}
	m.mu.Lock()
	e := m.kept[schedule.ID()]
	m.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.usedAt = time.Now()
		broken := e.broken
		e.mu.Unlock()
		if !broken {
			return e.image, nil
		}
	}
	return loadOnce(ctx, &m.loading, schedule.ID(), func() (*Image, error) {
		return m.load(context.WithoutCancel(ctx), schedule)
	})
}

// loadOnce returns the image load makes, one load of a schedule at a time
// in flights: a caller that finds one under way waits for it, as long as
// ctx allows.
func loadOnce(ctx context.Context, flights *singleflight.Group, scheduleID int64, load func() (*Image, error)) (*Image, error) {
	ch := flights.DoChan(strconv.FormatInt(scheduleID, 10), func() (any, error) { return load() })
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		image, _ := res.Val.(*Image)
		return image, res.Err
	}
}

// Expect implements reservation.SeatImages (Image.Expect).
func (m *Images) Expect(scheduleID int64, seats []int, status reservation.SeatStatus) {
	m.mu.Lock()
	e := m.kept[scheduleID]
	m.mu.Unlock()
	if e != nil {
		e.image.Expect(seats, status)
	} else if image := m.polling.kept(scheduleID); image != nil {
		image.Expect(seats, status)
	}
}

// load makes (or remakes) the schedule's image: subscribe first, then
// read the stream's position, then the seats, so that every change after
// the position reaches the image and none before it is counted twice.
func (m *Images) load(ctx context.Context, schedule reservation.Schedule) (*Image, error) {
	m.mu.Lock()
	e := m.kept[schedule.ID()]
	m.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		broken := e.broken
		e.mu.Unlock()
		if !broken { // loaded by a flight that ended before this one began
			return e.image, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	if time.Since(time.Unix(0, m.unfollowableAt.Load())) < retryFeedAfter {
		return m.polling.image(ctx, schedule)
	}
	sub, err := m.feed.Follow(ctx, schedule.ID(), m.cfg.Buffer)
	if err != nil {
		return m.polled(ctx, schedule, err)
	}
	at := m.feed.Position(ctx, schedule.ID())
	if at.Err != nil {
		sub.Close()
		return m.polled(ctx, schedule, at.Err)
	}
	seats, err := m.source.OccupiedSeats(ctx, schedule.ID())
	if err != nil {
		sub.Close()
		return nil, err
	}
	image := NewImage(schedule)
	if e != nil {
		image = e.image // reset in place: readers keep the one they have
		e.mu.Lock()
		e.retired = true
		e.mu.Unlock()
		e.sub.Close()
	}
	image.Reset(at.Added, at.Last, at.Last, seats)
	next := &followedImage{image: image, sub: sub, bytes: weigh(schedule), usedAt: time.Now(), lastSeen: at.Last,
		checked: position{at.Added, at.Last}}
	m.stopped.Add(1)
	go m.follow(schedule.ID(), next)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.kept[schedule.ID()]; old != nil {
		m.keptBytes -= old.bytes
	}
	m.kept[schedule.ID()] = next
	m.keptBytes += next.bytes
	m.bound(schedule.ID())
	return image, nil
}

// polled answers with the image listed from PostgreSQL when the feed
// cannot be followed (why).
func (m *Images) polled(ctx context.Context, schedule reservation.Schedule, why error) (*Image, error) {
	m.unfollowableAt.Store(time.Now().UnixNano())
	m.cfg.Logger.Warn("seat images: cannot follow the seat feed; listing seats from PostgreSQL",
		slog.Int64("schedule", schedule.ID()), slog.Any("error", why))
	return m.polling.image(ctx, schedule)
}

// follow applies e's events until its subscription ends; an end this
// side did not ask for (the subscription fell behind, the feed closed)
// marks the image for a load.
func (m *Images) follow(scheduleID int64, e *followedImage) {
	defer m.stopped.Done()
	var events []seatfeed.Event
	for batch := range e.sub.C {
		e.mu.Lock()
		retired := e.retired
		e.mu.Unlock()
		if retired {
			continue // drained: the channel closes
		}
		events = events[:0]
		for _, ev := range batch.Events {
			if seatfeed.After(ev.ID, e.lastSeen) {
				events = append(events, ev)
				e.lastSeen = ev.ID
			}
		}
		if len(events) > 0 {
			e.image.Apply(events, e.lastSeen)
		}
	}
	e.mu.Lock()
	e.broken = true
	e.mu.Unlock()
	if e.sub.Lagged() {
		m.cfg.Logger.Info("seat images: an image fell behind its events; loading it again", slog.Int64("schedule", scheduleID))
	}
}

// checkEvery is how often a kept image is checked against its stream.
const checkEvery = time.Second

// position is an image's count of events and the id of the last one.
type position struct {
	events    int64
	lastEvent string
}

// unchanged reports whether e took in no event since its last check (or
// its load): then it is not checked again. A check acts only when the
// stream's last entry is the image's last event, and a stream that
// changes after the check gets new entries, which reach the image as
// events: an image that takes in none has nothing a check could find.
// e.mu is held.
func (e *followedImage) unchanged() bool {
	events, last := e.image.Position()
	return e.checked == position{events, last}
}

// check compares each image's count of events with its stream's: when
// the stream's last entry is the last event the image took in, the
// stream's count of entries must be the image's. It is not when entries
// the image took in were lost from the stream (a Redis failover drops
// what the old master had not passed on; the relay appends those changes
// again, under new ids), or when some never reached the image: either way
// the image may be wrong, and the next request loads it again. The
// streams of all the images are asked about in one round trip (one per
// node of a Redis Cluster), however many are kept; an image that took in
// no event since its last check is not asked about (unchanged), so an
// idle schedule's image costs Redis nothing.
func (m *Images) check(images map[int64]*followedImage) {
	ctx, cancel := context.WithTimeout(context.Background(), checkEvery)
	defer cancel()
	ids := make([]int64, 0, len(images))
	for id := range images {
		ids = append(ids, id)
	}
	positions := m.feed.Positions(ctx, ids)
	for i, id := range ids {
		e, at := images[id], positions[i]
		events, seen := e.image.Position()
		e.mu.Lock()
		e.checks++
		if at.Err == nil {
			e.checked = position{events, seen}
		}
		if at.Err == nil && at.Last == seen && at.Added != events {
			e.broken = true
			m.cfg.Logger.Warn("seat images: an image's count of events differs from its stream's; loading it again",
				slog.Int64("schedule", id), slog.Int64("image", events), slog.Int64("stream", at.Added))
		}
		e.mu.Unlock()
	}
}

// maintain, every checkEvery, drops the images nobody asked for in Idle
// and nobody watches, and checks the others against their streams
// (check). A check is done before the next tick is taken, so that a slow
// Redis delays the checks rather than piling them up.
func (m *Images) maintain() {
	defer m.stopped.Done()
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		if toCheck := m.dropIdle(); len(toCheck) > 0 {
			m.check(toCheck)
		}
	}
}

// dropIdle drops the images nobody asked for in Idle and nobody watches,
// and returns those of the others that took in events since their last
// check.
func (m *Images) dropIdle() map[int64]*followedImage {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rounds++
	ids := make([]int64, 0, len(m.kept))
	for id := range m.kept {
		ids = append(ids, id)
	}
	watchers := m.feed.Watchers(ids)
	toCheck := make(map[int64]*followedImage, len(ids))
	for i, id := range ids {
		e := m.kept[id]
		e.mu.Lock()
		idle := time.Since(e.usedAt) > m.cfg.Idle && watchers[i] == 0
		check := !e.broken && !e.unchanged()
		e.mu.Unlock()
		switch {
		case idle:
			m.drop(id, e)
		case check:
			toCheck[id] = e
		}
	}
	return toCheck
}

// drop forgets the kept image e of schedule id and ends its
// subscription; m.mu is held.
func (m *Images) drop(id int64, e *followedImage) {
	delete(m.kept, id)
	m.keptBytes -= e.bytes
	e.sub.Close()
}

// Close drops every image and stops following the feed.
func (m *Images) Close() {
	close(m.stop)
	m.mu.Lock()
	for id, e := range m.kept {
		m.drop(id, e)
	}
	m.mu.Unlock()
	m.stopped.Wait()
}
