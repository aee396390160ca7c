package seatfeed

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Images keeps this instance's images of the schedules' seats
// (reservation.SeatImages) current by the seat events: an image is loaded
// once from PostgreSQL, at a known position of its schedule's stream, and
// from then on takes in every change the stream carries, so that reading
// the seat map or choosing best seats costs no query however large the
// venue. An image's version is its position's count of stream entries
// (Redis's entries-added), the same on every instance; its tag adds the id
// of the last entry.
//
// A gap in the events (the image's subscription fell behind) makes the
// next request load the image again. While the feed cannot be followed
// (Redis unreachable), images are listed from PostgreSQL instead
// (reservation.NewPollingSeatImages). An image nobody asked for in
// ImagesConfig.Idle is dropped, and its subscription with it. Every second
// each kept image's count of events is checked against its stream's
// (check): one that differs is loaded again.
type Images struct {
	feed     *Feed
	seats    reservation.OccupiedSeatLister
	fallback reservation.SeatImages
	cfg      ImagesConfig

	mu      sync.Mutex
	kept    map[int64]*followedImage
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

// Defaults of ImagesConfig.
const (
	DefaultImagesIdle   = 2 * time.Minute
	DefaultImagesBuffer = 256
)

// ImagesConfig tunes Images. Zero values take the defaults.
type ImagesConfig struct {
	// Idle is how long an image is kept without being asked for.
	Idle time.Duration
	// Buffer is how many batches of events an image's subscription may
	// fall behind before it is ended, and the image loaded again.
	Buffer int
	Logger *slog.Logger
}

type followedImage struct {
	image *reservation.SeatImage
	sub   *Subscription

	mu       sync.Mutex
	usedAt   time.Time
	broken   bool // its subscription ended, or its count went wrong: load again
	checking bool
	checks   int // checks done, for tests to wait on
	// retired is set when a load replaces this entry: its events, if any
	// are still on their way, must not reach the image again.
	retired  bool
	lastSeen string
}

// NewImages returns images kept by f, loaded from seats. Close stops
// them.
func NewImages(f *Feed, seats reservation.OccupiedSeatLister, cfg ImagesConfig) *Images {
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultImagesIdle
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultImagesBuffer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Images{feed: f, seats: seats, fallback: reservation.NewPollingSeatImages(seats), cfg: cfg,
		kept: map[int64]*followedImage{}, stop: make(chan struct{})}
	m.stopped.Add(1)
	go m.maintain()
	return m
}

// SeatImage implements reservation.SeatImages.
func (m *Images) SeatImage(ctx context.Context, schedule reservation.Schedule) (*reservation.SeatImage, error) {
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
	ch := m.loading.DoChan(strconv.FormatInt(schedule.ID(), 10), func() (any, error) {
		return m.load(context.WithoutCancel(ctx), schedule)
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*reservation.SeatImage), nil
	}
}

// Kept implements reservation.SeatImages.
func (m *Images) Kept(scheduleID int64) *reservation.SeatImage {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.kept[scheduleID]; e != nil {
		return e.image
	}
	return m.fallback.Kept(scheduleID)
}

// load makes (or remakes) the schedule's image: subscribe first, then
// read the stream's position, then the seats, so that every change after
// the position reaches the image and none before it is counted twice.
func (m *Images) load(ctx context.Context, schedule reservation.Schedule) (*reservation.SeatImage, error) {
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
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if time.Since(time.Unix(0, m.unfollowableAt.Load())) < retryFeedAfter {
		return m.fallback.SeatImage(ctx, schedule)
	}
	sub, err := m.feed.Subscribe(ctx, schedule.ID(), m.cfg.Buffer)
	if err != nil {
		return m.polled(ctx, schedule, err)
	}
	last, added, err := m.feed.position(ctx, schedule.ID())
	if err != nil {
		sub.Close()
		return m.polled(ctx, schedule, err)
	}
	seats, err := m.seats.OccupiedSeats(ctx, schedule.ID())
	if err != nil {
		sub.Close()
		return nil, err
	}
	image := reservation.NewSeatImage(schedule)
	if e != nil {
		image = e.image // reset in place: readers keep the one they have
		e.mu.Lock()
		e.retired = true
		e.mu.Unlock()
		e.sub.Close()
	}
	image.Reset(added, last, last, seats)
	next := &followedImage{image: image, sub: sub, usedAt: time.Now(), lastSeen: last}
	m.mu.Lock()
	m.kept[schedule.ID()] = next
	m.mu.Unlock()
	m.stopped.Add(1)
	go m.follow(schedule.ID(), next)
	return image, nil
}

// polled answers with the image listed from PostgreSQL when the feed
// cannot be followed (why).
func (m *Images) polled(ctx context.Context, schedule reservation.Schedule, why error) (*reservation.SeatImage, error) {
	m.unfollowableAt.Store(time.Now().UnixNano())
	m.cfg.Logger.Warn("seat images: cannot follow the seat feed; listing seats from PostgreSQL",
		slog.Int64("schedule", schedule.ID()), slog.Any("error", why))
	return m.fallback.SeatImage(ctx, schedule)
}

// follow applies e's events until its subscription ends; an end this
// side did not ask for (the subscription fell behind, the feed closed)
// marks the image for a load.
func (m *Images) follow(scheduleID int64, e *followedImage) {
	defer m.stopped.Done()
	var events []reservation.SeatEvent
	for batch := range e.sub.C {
		e.mu.Lock()
		retired := e.retired
		e.mu.Unlock()
		if retired {
			continue // drained: the channel closes
		}
		events = events[:0]
		for _, ev := range batch.Events {
			if After(ev.ID, e.lastSeen) {
				events = append(events, reservation.SeatEvent{ID: ev.ID, SeatID: ev.SeatID, Status: ev.Status})
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

// check compares each image's count of events with its stream's: when
// the stream's last entry is the last event the image took in, the
// stream's count of entries must be the image's. It is not when entries
// the image took in were lost from the stream (a Redis failover drops
// what the old master had not passed on; the relay appends those changes
// again, under new ids), or when some never reached the image: either way
// the image may be wrong, and the next request loads it again. The
// streams of all the images are asked about in one round trip.
func (m *Images) check(images map[int64]*followedImage) {
	defer m.stopped.Done()
	ctx, cancel := context.WithTimeout(context.Background(), checkEvery)
	defer cancel()
	ids := make([]int64, 0, len(images))
	for id := range images {
		ids = append(ids, id)
	}
	positions := m.feed.positions(ctx, ids)
	for i, id := range ids {
		e, at := images[id], positions[i]
		events, seen := e.image.Position()
		e.mu.Lock()
		e.checking = false
		e.checks++
		if at.err == nil && at.last == seen && at.added != events {
			e.broken = true
			m.cfg.Logger.Warn("seat images: an image's count of events differs from its stream's; loading it again",
				slog.Int64("schedule", id), slog.Int64("image", events), slog.Int64("stream", at.added))
		}
		e.mu.Unlock()
	}
}

// maintain checks, every checkEvery, the kept images against their
// streams (check), and drops the images nobody asked for in Idle.
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
		toCheck := map[int64]*followedImage{}
		m.mu.Lock()
		for id, e := range m.kept {
			e.mu.Lock()
			idle := time.Since(e.usedAt) > m.cfg.Idle
			check := !idle && !e.broken && !e.checking
			e.checking = e.checking || check
			e.mu.Unlock()
			switch {
			case idle:
				delete(m.kept, id)
				e.sub.Close()
			case check:
				toCheck[id] = e
			}
		}
		if len(toCheck) > 0 {
			m.stopped.Add(1)
			go m.check(toCheck)
		}
		m.mu.Unlock()
	}
}

// Close drops every image and stops following the feed.
func (m *Images) Close() {
	close(m.stop)
	m.mu.Lock()
	for id, e := range m.kept {
		delete(m.kept, id)
		e.sub.Close()
	}
	m.mu.Unlock()
	m.stopped.Wait()
}

// position is where the schedule's stream is: the id of its last entry
// and how many entries it was ever given (ZeroID and 0 when it has none).
func (f *Feed) position(ctx context.Context, scheduleID int64) (last string, added int64, err error) {
	at := positionOf(f.rdb.XInfoStream(ctx, StreamKey(scheduleID)))
	return at.last, at.added, at.err
}

// streamPosition is a stream's position, or why it is not known.
type streamPosition struct {
	last  string
	added int64
	err   error
}

// positions returns the positions of the schedules' streams, in one round
// trip (one per node of a Redis Cluster).
func (f *Feed) positions(ctx context.Context, scheduleIDs []int64) []streamPosition {
	cmds := make([]*redis.XInfoStreamCmd, len(scheduleIDs))
	// The commands' own errors are read below, one by one.
	_, _ = f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range scheduleIDs {
			cmds[i] = p.XInfoStream(ctx, StreamKey(id))
		}
		return nil
	})
	at := make([]streamPosition, len(cmds))
	for i, cmd := range cmds {
		at[i] = positionOf(cmd)
	}
	return at
}

func positionOf(cmd *redis.XInfoStreamCmd) streamPosition {
	info, err := cmd.Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return streamPosition{last: ZeroID}
		}
		return streamPosition{err: fmt.Errorf("seatfeed: position: %w: %w", reservation.ErrUnavailable, err)}
	}
	return streamPosition{last: info.LastGeneratedID, added: info.EntriesAdded}
}
