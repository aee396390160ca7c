package seatfeed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// streamReader follows the streams of every schedule an instance watches
// in one blocking read (XREAD BLOCK of many streams) on one connection:
// a reader per schedule would hold a Redis connection and a goroutine for
// each schedule watched, and an instance keeps following every seat map
// read in the last minutes.
//
// A schedule watched while the read waits is not in it. So that its
// changes do not wait for the read's end (Config.Block), the read is
// ended early (CLIENT UNBLOCK) and the next one takes it in.
type streamReader struct {
	feed   *Feed
	client *redis.Client
	cancel context.CancelFunc
	done   chan struct{} // closed when both goroutines are done

	// idle wakes the reader when it waits with no stream to read;
	// changed wakes the unblocker when a schedule was added.
	idle, changed chan struct{}
	// rounds counts the reads begun, each on the streams watched when
	// it began (taken under Feed.mu); wanted is the first round that
	// has every stream added so far.
	rounds, wanted atomic.Uint64
	// waiting is the CLIENT ID of the reader's connection while it may be
	// waiting in a read, 0 otherwise.
	waiting atomic.Int64
}

// unblockRetry is how often a read is asked to end until a round that
// has the added streams begins: the first ask can come before the read
// reaches Redis, and then ends nothing.
const unblockRetry = 5 * time.Millisecond

func startStreamReader(f *Feed, client *redis.Client) *streamReader {
	ctx, cancel := context.WithCancel(context.Background())
	r := &streamReader{feed: f, client: client, cancel: cancel, done: make(chan struct{}),
		idle: make(chan struct{}, 1), changed: make(chan struct{}, 1)}
	var running sync.WaitGroup
	running.Go(func() { r.read(ctx) })
	running.Go(func() { r.unblockForAdded(ctx) })
	go func() { running.Wait(); close(r.done) }()
	return r
}

// added records that a stream was added to the watched ones; Feed.mu is
// held.
func (r *streamReader) added() {
	r.wanted.Store(r.rounds.Load() + 1)
	signal(r.idle)
	signal(r.changed)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// stop ends the reader, ending a read that waits, and waits for it.
func (r *streamReader) stop() {
	r.cancel()
	for {
		r.unblock(context.Background())
		select {
		case <-r.done:
			return
		case <-time.After(unblockRetry):
		}
	}
}

// unblock ends the reader's read if it is waiting; best effort: a read
// that Redis has not seen yet, or a connection to a deposed master, is
// not ended.
func (r *streamReader) unblock(ctx context.Context) {
	if id := r.waiting.Load(); id != 0 {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = r.client.ClientUnblock(ctx, id).Err()
	}
}

// unblockForAdded ends the waiting read each time streams were added to
// the watched ones, until a read that has them begins.
func (r *streamReader) unblockForAdded(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.changed:
		}
		for r.rounds.Load() < r.wanted.Load() {
			r.unblock(ctx)
			if !sleep(ctx, unblockRetry) {
				return
			}
		}
	}
}

// read follows the watched streams until ctx ends.
func (r *streamReader) read(ctx context.Context) {
	var conn readerConn
	defer conn.close()
	for ctx.Err() == nil {
		hubs := r.feed.watched(&r.rounds)
		if len(hubs) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-r.idle:
			}
			continue
		}
		started := time.Now()
		res, err := r.readOnce(ctx, &conn, hubs)
		switch {
		case errors.Is(err, redis.Nil):
			continue // the read's time ran out, or it was ended for new streams
		case err != nil:
			conn.close()
			if ctx.Err() != nil {
				return
			}
			r.feed.log.Warn("seat feed: read failed; retrying", slog.Int("schedules", len(hubs)), slog.Any("error", err))
			if !sleep(ctx, retryAfterError) {
				return
			}
			continue
		}
		deliver(hubs, res)
		if !r.feed.pace(ctx, started) {
			return
		}
	}
}

// readOnce reads the streams of hubs, each after its hub's last entry,
// waiting up to Config.Block for one to have any.
func (r *streamReader) readOnce(ctx context.Context, conn *readerConn, hubs []*hub) ([]redis.XStream, error) {
	if err := conn.open(ctx, r.client); err != nil {
		return nil, err
	}
	streams := make([]string, 2*len(hubs))
	for i, h := range hubs {
		streams[i], streams[len(hubs)+i] = h.key, h.last
	}
	r.waiting.Store(conn.id)
	defer r.waiting.Store(0)
	if err := ctx.Err(); err != nil { // stop may have looked before the store
		return nil, err
	}
	return conn.XRead(ctx, &redis.XReadArgs{Streams: streams, Count: 512, Block: r.feed.cfg.Block}).Result()
}

// readerConn is the reader's connection and its CLIENT ID.
type readerConn struct {
	*redis.Conn
	id int64
}

func (c *readerConn) open(ctx context.Context, client *redis.Client) error {
	if c.Conn != nil {
		return nil
	}
	c.Conn = client.Conn()
	id, err := c.ClientID(ctx).Result()
	var refused redis.Error
	switch {
	case errors.As(err, &refused):
		// A Redis that refuses CLIENT ID (an ACL) is read all the same:
		// a schedule watched during a read waits for its end.
		c.id = 0
	case err != nil:
		c.close()
		return err
	default:
		c.id = id
	}
	return nil
}

func (c *readerConn) close() {
	if c.Conn != nil {
		_ = c.Conn.Close() //nolint:staticcheck // QF1008: c.Conn.Close names the connection, not readerConn's own close around it
		c.Conn, c.id = nil, 0
	}
}

// deliver hands each stream's entries to its hub.
func deliver(hubs []*hub, res []redis.XStream) {
	if len(res) == 0 {
		return
	}
	byKey := make(map[string]*hub, len(hubs))
	for _, h := range hubs {
		byKey[h.key] = h
	}
	for _, stream := range res {
		if h := byKey[stream.Stream]; h != nil {
			h.take(stream.Messages)
		}
	}
}

// watched returns the hubs to read now, and counts the read in rounds.
func (f *Feed) watched(rounds *atomic.Uint64) []*hub {
	f.mu.Lock()
	defer f.mu.Unlock()
	rounds.Add(1)
	hubs := make([]*hub, 0, len(f.hubs))
	for _, h := range f.hubs {
		hubs = append(hubs, h)
	}
	return hubs
}
