package seatfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Batch is the changes one read of a schedule's stream found, in stream
// order. Every subscriber of the instance receives the same Batch: none
// may change it.
type Batch struct {
	Events []Event

	once    sync.Once
	encoded []byte
}

// Encoded returns encode(b.Events), computed by the first subscriber that
// asks and shared by the others, so a thousand subscribers that send a
// batch over the network encode it once. Every caller must pass the same
// encoding.
func (b *Batch) Encoded(encode func([]Event) []byte) []byte {
	b.once.Do(func() { b.encoded = encode(b.Events) })
	return b.encoded
}

// Subscription receives a schedule's changes made after Subscribe
// returned, in stream order, in batches. One send per batch, not per
// change, keeps a thousand subscribers cheap when changes come fast.
type Subscription struct {
	// C delivers the changes. It is closed when the subscription ends:
	// Close, the Feed's Close, or the subscriber falling behind (Lagged).
	C <-chan *Batch

	ch     chan *Batch
	hub    *hub
	lagged bool
	closed bool
	// watcher is set for a subscription that sends its batches over the
	// network (Subscribe), unset for one that follows the schedule inside
	// this process (Follow).
	watcher bool
}

// Lagged reports whether the subscription ended because its buffer was
// full: the subscriber fell behind and missed changes, and must start
// over from a snapshot. A slow subscriber never slows a booking.
func (s *Subscription) Lagged() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.lagged
}

// Close ends the subscription.
func (s *Subscription) Close() { s.hub.feed.unsubscribe(s) }

// Subscribe follows a schedule's changes with a buffer of buffer batches,
// for a watcher: a subscriber that sends them over the network, counted in
// Config.MaxDeliveries and in Watchers. The first subscriber of a schedule
// on this instance starts following its stream at the stream's current
// head, so nothing published after Subscribe returns is missed.
func (f *Feed) Subscribe(ctx context.Context, scheduleID int64, buffer int) (*Subscription, error) {
	return f.subscribe(ctx, scheduleID, buffer, true)
}

// Follow is Subscribe for a subscriber inside this process (a seat
// image): taking in a batch costs no network write, so it is not paced by
// Config.MaxDeliveries, and it is no watcher (Watchers).
func (f *Feed) Follow(ctx context.Context, scheduleID int64, buffer int) (*Subscription, error) {
	return f.subscribe(ctx, scheduleID, buffer, false)
}

// Watchers returns, for each schedule, how many of its subscriptions on
// this instance are watchers' (Subscribe).
func (f *Feed) Watchers(scheduleIDs []int64) []int {
	counts := make([]int, len(scheduleIDs))
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, id := range scheduleIDs {
		if h := f.hubs[id]; h != nil {
			h.mu.Lock()
			counts[i] = h.watchers
			h.mu.Unlock()
		}
	}
	return counts
}

func (f *Feed) subscribe(ctx context.Context, scheduleID int64, buffer int, watcher bool) (*Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("seatfeed: subscribe: %w: the feed is closed", reservation.ErrUnavailable)
	}
	h := f.hubs[scheduleID]
	if h == nil {
		head, err := f.Head(ctx, scheduleID)
		if err != nil {
			return nil, err
		}
		h = &hub{feed: f, scheduleID: scheduleID, key: StreamKey(scheduleID), last: head, subs: map[*Subscription]struct{}{}}
		f.hubs[scheduleID] = h
		f.follow(h)
	}
	s := &Subscription{ch: make(chan *Batch, max(buffer, 1)), hub: h, watcher: watcher}
	s.C = s.ch
	h.mu.Lock()
	h.subs[s] = struct{}{}
	if watcher {
		h.watchers++
		f.subscribers.Add(1)
	}
	h.mu.Unlock()
	return s, nil
}

// follow starts reading h's stream: in the instance's one read of every
// watched stream, or, on a Redis Cluster, in a read of its own. f.mu is
// held.
func (f *Feed) follow(h *hub) {
	if f.shared == nil {
		h.readAlone()
		return
	}
	if f.reader == nil {
		f.reader = startStreamReader(f, f.shared)
	}
	f.reader.added()
}

func (f *Feed) unsubscribe(s *Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := s.hub
	h.mu.Lock()
	h.end(s)
	empty := len(h.subs) == 0
	h.mu.Unlock()
	if empty && f.hubs[h.scheduleID] == h {
		delete(f.hubs, h.scheduleID)
		// A read of its own is not waited for: it may block for up to
		// Config.Block, and nobody is left to deliver to. The instance's
		// read leaves the stream out from its next read on.
		if h.cancel != nil {
			h.cancel()
		}
	}
}

// hub delivers one schedule's changes to every local subscriber.
type hub struct {
	feed       *Feed
	scheduleID int64
	key        string
	// last is the id of the last entry delivered: the next read starts
	// after it. Only the hub's reader uses it once the hub is followed.
	last string
	// cancel and done are those of a read of its own (readAlone); nil
	// when the instance's one read follows the hub.
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	subs map[*Subscription]struct{}
	// watchers counts the subscriptions in subs that are watchers'.
	watchers int
}

// readAlone starts a reader of h's stream alone.
func (h *hub) readAlone() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go h.run(ctx)
}

// stop ends a read of its own, waits for it, and ends every
// subscription still open.
func (h *hub) stop() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		h.end(s)
	}
}

// end removes s and closes its channel once; h.mu is held.
func (h *hub) end(s *Subscription) {
	delete(h.subs, s)
	if !s.closed {
		if s.watcher {
			h.watchers--
			h.feed.subscribers.Add(-1)
		}
		s.closed = true
		close(s.ch)
	}
}

// retryAfterError is the pause after a failed read: Redis restarting or
// unreachable. The reader resumes from the last entry it delivered.
const retryAfterError = 250 * time.Millisecond

// pace waits out the rest of the feed's interval after a read begun at
// started, so that changes arriving meanwhile go out in one batch with
// the next read. It reports false when ctx ends first.
func (f *Feed) pace(ctx context.Context, started time.Time) bool {
	return sleep(ctx, f.interval()-time.Since(started))
}

// sleep waits d, reporting false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// run reads h's stream alone until ctx ends.
func (h *hub) run(ctx context.Context) {
	defer close(h.done)
	for ctx.Err() == nil {
		started := time.Now()
		res, err := h.feed.rdb.XRead(ctx, &redis.XReadArgs{
			Streams: []string{h.key, h.last}, Count: 512, Block: h.feed.cfg.Block,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			h.feed.log.Warn("seat feed: read failed; retrying", slog.Int64("schedule", h.scheduleID), slog.Any("error", err))
			if !sleep(ctx, retryAfterError) {
				return
			}
			continue
		}
		for _, stream := range res {
			h.take(stream.Messages)
		}
		if !h.feed.pace(ctx, started) {
			return
		}
	}
}

// take delivers entries read from h's stream and moves h.last past them.
func (h *hub) take(entries []redis.XMessage) {
	if n := len(entries); n > 0 {
		h.last = entries[n-1].ID
		h.broadcast(toEvents(entries))
	}
}

// broadcast hands a batch to every subscriber without ever waiting: one
// whose buffer is full is ended as lagged.
func (h *hub) broadcast(events []Event) {
	if len(events) == 0 {
		return
	}
	batch := &Batch{Events: events}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- batch:
		default:
			s.lagged = true
			h.end(s)
		}
	}
}
