// Package seatfeed carries seat changes from the instance that made them to
// every instance that streams a live seat map: a Redis Stream per schedule,
// `seatmap:{schedule:<id>}` (the lock keys' hash tag, so one Redis Cluster
// slot), one entry per seat change. An entry's id is the event id clients
// see: ordered, the same on every instance, and a place to resume from.
//
// A stream and not Pub/Sub: a subscriber that was away (a reconnecting
// browser, an instance whose Redis connection broke) reads what it missed
// from the stream by id, and learns when it cannot (the stream was trimmed
// or recreated), where Pub/Sub would drop those changes silently.
//
// The changes come from the seat_changes outbox, through the Relay
// (relay.go): one instance at a time appends them (Feed.Append,
// relay_append.go) and deletes them from the outbox.
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

	"github.com/seatlock/seatlock/internal/lock/redisbatch"
	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Defaults of Config.
const (
	// DefaultMaxLen is about how many changes a schedule's stream keeps:
	// enough for every seat of the largest schedule to change a few times,
	// so a client that reconnects within seconds resumes without a gap.
	DefaultMaxLen = 4 * reservation.MaxSeatCount
	// DefaultRetention is how long a stream lives after its last change.
	DefaultRetention = 24 * time.Hour
	// DefaultBlock is how long one read of a schedule's stream waits for
	// new entries before it asks again.
	DefaultBlock = 2 * time.Second
	// DefaultInterval is the shortest time between two reads of a
	// schedule's stream on one instance.
	DefaultInterval = 20 * time.Millisecond
	// DefaultMaxDeliveries is about how many batches per second an
	// instance hands to its subscribers: each one is a network write.
	DefaultMaxDeliveries = 5_000
	// DefaultReplicaTimeout is how long an append waits for its replicas
	// (Config.Replicas) before it is refused and tried again.
	DefaultReplicaTimeout = time.Second
	// DefaultReplicaGrace is how long appends wait for replicas in all
	// (Config.ReplicaGrace).
	DefaultReplicaGrace = 5 * time.Second
	// maxCatchUp is the most missed changes sent to a resuming client;
	// past it a fresh snapshot is cheaper.
	maxCatchUp = 2000
)

// Config tunes a Feed. Zero values take the defaults.
type Config struct {
	MaxLen    int64
	Retention time.Duration
	Block     time.Duration
	// Interval is the shortest time between two reads of a schedule's
	// stream: changes that come faster go out together, so a subscriber
	// wakes at most once per Interval however fast seats change, and a
	// thousand subscribers cost a thousand wake-ups per Interval, not per
	// change. It is also the longest a change waits for the next read.
	Interval time.Duration
	// MaxDeliveries bounds the batches handed to watchers (Subscribe, not
	// Follow) per second, all schedules together: with more watchers than
	// MaxDeliveries × Interval, reads are spaced further apart (a thousand
	// watchers and the default of 5,000 give 200 ms), so the cost of a
	// crowd of watchers stays the same however large it grows, and each
	// of them waits a little longer for a change. The seat images an
	// instance keeps (Follow) are not counted: they cost no network write.
	MaxDeliveries int
	// BatchLanes is how many batches of published changes may be in
	// flight at once (redisbatch.DefaultLanes when 0; < 0: each change
	// alone): the changes of concurrent bookings that find the feed busy
	// go to Redis in one pipeline.
	BatchLanes int
	// Replicas is how many replicas must have an append before Append
	// reports it done (Redis's WAIT on the appending connection), so that
	// a failover does not lose a change the relay has let go of; 0: the
	// master's word is enough. Not with a Redis Cluster client (WAIT is
	// per node): New panics.
	Replicas int
	// ReplicaTimeout bounds that WAIT (DefaultReplicaTimeout when 0).
	ReplicaTimeout time.Duration
	// ReplicaGrace is how long appends are refused for want of replicas
	// (DefaultReplicaGrace when 0): long enough for the clients to leave a
	// master deposed by a failover, whose appends are lost. Past it, with
	// still no replica to take them (the only one died, or is being made a
	// replica of the new master), the master's word is taken again, so
	// that the live map does not stop for as long as a replica is missing.
	ReplicaGrace time.Duration
	Logger       *slog.Logger
}

// Event is one seat change.
type Event struct {
	// ID is the stream entry's id ("<ms>-<seq>").
	ID     string
	SeatID int
	Status reservation.SeatStatus
	// Pos is the change's commit position (see Change), zero for an entry
	// written without one (by SeatsChanged).
	Pos int64
}

// Feed publishes seat changes and fans them out to local subscribers. One
// blocking read follows the streams of every schedule the instance
// watches, for all of its subscribers (reader.go); on a Redis Cluster,
// whose streams live in slots one read cannot span, one read per
// schedule.
type Feed struct {
	rdb      redis.UniversalClient
	pipeline *redisbatch.Pipeline
	cfg      Config
	log      *slog.Logger
	// shared is rdb when one read can follow every stream (not a
	// cluster), nil otherwise.
	shared *redis.Client

	mu     sync.Mutex
	hubs   map[int64]*hub
	reader *streamReader // started by the first Subscribe
	closed bool
	// subscribers counts the open watchers' subscriptions (Subscribe) of
	// every schedule: what paces the reads (interval).
	subscribers atomic.Int64
	// replicas judges the appends that want replicas (Config.Replicas).
	replicas *redisconn.Replicas
}

// interval is the time between two reads of a schedule's stream now.
func (f *Feed) interval() time.Duration {
	return max(f.cfg.Interval, time.Duration(f.subscribers.Load())*time.Second/time.Duration(f.cfg.MaxDeliveries))
}

// New returns a Feed on rdb. Close stops its readers. Every failure to
// reach Redis wraps reservation.ErrUnavailable.
func New(rdb redis.UniversalClient, cfg Config) *Feed {
	if cfg.MaxLen <= 0 {
		cfg.MaxLen = DefaultMaxLen
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Block <= 0 {
		cfg.Block = DefaultBlock
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxDeliveries <= 0 {
		cfg.MaxDeliveries = DefaultMaxDeliveries
	}
	if cfg.BatchLanes == 0 {
		cfg.BatchLanes = redisbatch.DefaultLanes
	}
	if cfg.ReplicaTimeout <= 0 {
		cfg.ReplicaTimeout = DefaultReplicaTimeout
	}
	if cfg.ReplicaGrace <= 0 {
		cfg.ReplicaGrace = DefaultReplicaGrace
	}
	if _, cluster := rdb.(*redis.ClusterClient); cluster && cfg.Replicas > 0 {
		panic("seatfeed: Config.Replicas with a Redis Cluster client")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	shared, _ := rdb.(*redis.Client)
	return &Feed{rdb: rdb, pipeline: redisbatch.New(rdb, cfg.BatchLanes), cfg: cfg, log: cfg.Logger, shared: shared, hubs: map[int64]*hub{},
		replicas: redisconn.NewReplicas(cfg.Replicas, cfg.ReplicaTimeout, cfg.ReplicaGrace, "seat feed: appends", cfg.Logger)}
}

// StreamKey is the Redis key of a schedule's changes.
func StreamKey(scheduleID int64) string {
	return "seatmap:{schedule:" + strconv.FormatInt(scheduleID, 10) + "}"
}

// SeatsChanged appends changes that have no outbox position: one stream
// entry per seat, and the stream's expiry pushed back, all in one round
// trip (shared with concurrent calls when the feed is busy). The service
// streams through the relay (Append); this writes a stream directly, as
// tests and tools do.
func (f *Feed) SeatsChanged(ctx context.Context, scheduleID int64, seats []reservation.Seat) error {
	key := StreamKey(scheduleID)
	cmds := make([]redisbatch.Command, 0, len(seats)+1)
	for _, s := range seats {
		cmds = append(cmds, redisbatch.Command{Args: []any{
			"xadd", key, "maxlen", "~", f.cfg.MaxLen, "*", "seat", s.ID, "status", string(s.Status),
		}})
	}
	cmds = append(cmds, redisbatch.Command{Args: []any{"pexpire", key, f.cfg.Retention.Milliseconds()}})
	for _, reply := range f.pipeline.Do(ctx, cmds...) {
		if err := reply.Err(); err != nil {
			return fmt.Errorf("seatfeed: publish: %w: %w", reservation.ErrUnavailable, err)
		}
	}
	return nil
}

// ZeroID is the position before every change: a snapshot of a schedule
// whose stream is empty carries it.
const ZeroID = "0-0"

// Head returns the id of the schedule's latest change, ZeroID when none
// is kept.
func (f *Feed) Head(ctx context.Context, scheduleID int64) (string, error) {
	entries, err := f.rdb.XRevRangeN(ctx, StreamKey(scheduleID), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("seatfeed: head: %w: %w", reservation.ErrUnavailable, err)
	}
	if len(entries) == 0 {
		return ZeroID, nil
	}
	return entries[0].ID, nil
}

// Position is where a schedule's stream is: the id of its last entry and
// how many entries it was ever given (ZeroID and 0 when it has none), or
// why that is not known.
type Position struct {
	Last  string
	Added int64
	Err   error
}

// Position returns where the schedule's stream is.
func (f *Feed) Position(ctx context.Context, scheduleID int64) Position {
	return positionOf(f.rdb.XInfoStream(ctx, StreamKey(scheduleID)))
}

// Positions returns the positions of the schedules' streams, in one round
// trip (one per node of a Redis Cluster).
func (f *Feed) Positions(ctx context.Context, scheduleIDs []int64) []Position {
	cmds := make([]*redis.XInfoStreamCmd, len(scheduleIDs))
	// The commands' own errors are read below, one by one.
	_, _ = f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range scheduleIDs {
			cmds[i] = p.XInfoStream(ctx, StreamKey(id))
		}
		return nil
	})
	at := make([]Position, len(cmds))
	for i, cmd := range cmds {
		at[i] = positionOf(cmd)
	}
	return at
}

func positionOf(cmd *redis.XInfoStreamCmd) Position {
	info, err := cmd.Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return Position{Last: ZeroID}
		}
		return Position{Err: fmt.Errorf("seatfeed: position: %w: %w", reservation.ErrUnavailable, err)}
	}
	return Position{Last: info.LastGeneratedID, Added: info.EntriesAdded}
}

// Since returns the changes after the change afterID, in order. ok is false
// when they cannot all be told: afterID is not a change the stream still
// keeps (trimmed, expired, recreated, or never issued), or too many
// followed it. The caller then starts over from a snapshot.
func (f *Feed) Since(ctx context.Context, scheduleID int64, afterID string) (events []Event, ok bool, err error) {
	if _, valid := parseID(afterID); !valid {
		return nil, false, nil
	}
	key := StreamKey(scheduleID)
	start := "(" + afterID
	if afterID == ZeroID {
		// A snapshot taken before any change kept: every entry followed
		// it, unless some were trimmed since.
		whole, err := f.untrimmed(ctx, key)
		if err != nil || !whole {
			return nil, false, err
		}
		start = "-"
	} else {
		anchor, err := f.rdb.XRange(ctx, key, afterID, afterID).Result()
		if err != nil {
			return nil, false, fmt.Errorf("seatfeed: since: %w: %w", reservation.ErrUnavailable, err)
		}
		if len(anchor) == 0 {
			return nil, false, nil
		}
	}
	entries, err := f.rdb.XRangeN(ctx, key, start, "+", maxCatchUp+1).Result()
	if err != nil {
		return nil, false, fmt.Errorf("seatfeed: since: %w: %w", reservation.ErrUnavailable, err)
	}
	if len(entries) > maxCatchUp {
		return nil, false, nil
	}
	return toEvents(entries), true, nil
}

// untrimmed reports whether the stream has lost no entry since it was
// made (a missing stream has lost none).
func (f *Feed) untrimmed(ctx context.Context, key string) (bool, error) {
	info, err := f.rdb.XInfoStream(ctx, key).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return true, nil
		}
		return false, fmt.Errorf("seatfeed: since: %w: %w", reservation.ErrUnavailable, err)
	}
	// Trimming does not move max-deleted-entry-id; the count of entries
	// ever added against the length tells.
	return info.EntriesAdded == info.Length && info.MaxDeletedEntryID == ZeroID, nil
}

func toEvents(entries []redis.XMessage) []Event {
	events := make([]Event, 0, len(entries))
	for _, e := range entries {
		seat, _ := strconv.Atoi(fmt.Sprint(e.Values["seat"]))
		status, _ := e.Values["status"].(string)
		switch reservation.SeatStatus(status) {
		case reservation.SeatAvailable, reservation.SeatHeld, reservation.SeatReserved:
		default:
			continue // not one of ours; skip rather than fail the stream
		}
		if seat < 1 {
			continue
		}
		pos, _ := strconv.ParseInt(fmt.Sprint(e.Values["pos"]), 10, 64)
		events = append(events, Event{ID: e.ID, SeatID: seat, Status: reservation.SeatStatus(status), Pos: pos})
	}
	return events
}

// streamID is a parsed stream entry id, ordered as Redis orders them.
type streamID struct{ ms, seq uint64 }

func parseID(id string) (streamID, bool) {
	msText, seqText, found := strings.Cut(id, "-")
	if !found {
		return streamID{}, false
	}
	ms, err1 := strconv.ParseUint(msText, 10, 64)
	seq, err2 := strconv.ParseUint(seqText, 10, 64)
	return streamID{ms, seq}, err1 == nil && err2 == nil
}

// After reports whether stream id a comes after b. Ids that do not parse
// come after nothing.
func After(a, b string) bool {
	x, okA := parseID(a)
	y, okB := parseID(b)
	if !okA || !okB {
		return false
	}
	return x.ms > y.ms || x.ms == y.ms && x.seq > y.seq
}

// Close stops every reader; subscriptions end, and Subscribe fails from
// then on.
func (f *Feed) Close() {
	f.mu.Lock()
	hubs, reader := f.hubs, f.reader
	f.hubs, f.reader, f.closed = map[int64]*hub{}, nil, true
	f.mu.Unlock()
	if reader != nil {
		reader.stop()
	}
	for _, h := range hubs {
		h.stop()
	}
}
