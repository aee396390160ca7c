package seatfeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
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

// Subscribe follows a schedule's changes with a buffer of buffer batches.
// The first subscriber of a schedule on this instance starts its reader at
// the stream's current head, so nothing published after Subscribe returns
// is missed.
func (f *Feed) Subscribe(ctx context.Context, scheduleID int64, buffer int) (*Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hubs[scheduleID]
	if h == nil {
		head, err := f.Head(ctx, scheduleID)
		if err != nil {
			return nil, err
		}
		h = f.startHub(scheduleID, head)
		f.hubs[scheduleID] = h
	}
	s := &Subscription{ch: make(chan *Batch, max(buffer, 1)), hub: h}
	s.C = s.ch
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	f.subscribers.Add(1)
	return s, nil
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
		// Not waited for: its read may block for up to Config.Block, and
		// nobody is left to deliver to.
		h.cancel()
	}
}

// hub reads one schedule's stream for every local subscriber.
type hub struct {
	feed       *Feed
	scheduleID int64
	cancel     context.CancelFunc
	done       chan struct{}

	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (f *Feed) startHub(scheduleID int64, from string) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hub{feed: f, scheduleID: scheduleID, cancel: cancel, done: make(chan struct{}), subs: map[*Subscription]struct{}{}}
	go h.run(ctx, from)
	return h
}

// stop ends the reader, waits for it, and ends every subscription still
// open.
func (h *hub) stop() {
	h.cancel()
	<-h.done
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
		h.feed.subscribers.Add(-1)
		s.closed = true
		close(s.ch)
	}
}

// retryAfterError is the pause after a failed read: Redis restarting or
// unreachable. The reader resumes from the last entry it delivered.
const retryAfterError = 250 * time.Millisecond

func (h *hub) run(ctx context.Context, from string) {
	defer close(h.done)
	key := StreamKey(h.scheduleID)
	last := from
	for ctx.Err() == nil {
		started := time.Now()
		res, err := h.feed.rdb.XRead(ctx, &redis.XReadArgs{
			Streams: []string{key, last}, Count: 512, Block: h.feed.cfg.Block,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			h.feed.log.Warn("seat feed: read failed; retrying", slog.Int64("schedule", h.scheduleID), slog.Any("error", err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(retryAfterError):
			}
			continue
		}
		for _, stream := range res {
			if n := len(stream.Messages); n > 0 {
				last = stream.Messages[n-1].ID
				h.broadcast(toEvents(stream.Messages))
			}
		}
		// Changes that arrive meanwhile wait for the next read and go
		// out in one batch.
		if wait := h.feed.interval() - time.Since(started); wait > 0 {
			pause := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				pause.Stop()
				return
			case <-pause.C:
			}
		}
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
