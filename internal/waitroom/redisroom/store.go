// Package redisroom keeps the waiting room's queues in Redis: a schedule's
// queue is six keys under one hash tag ("queue:{42}:line"), changed only by
// Lua scripts that read the time from Redis itself, so that every instance
// sees one line and one clock. With Replicas, a write is acknowledged only
// once that many replicas have it (WAIT), so that a Sentinel failover does
// not lose a ticket a buyer was given.
package redisroom

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
)

var (
	//go:embed common.lua
	common string
	//go:embed join.lua
	joinSource string
	//go:embed places.lua
	placesSource string
	//go:embed leave.lua
	leaveSource string
	//go:embed admit.lua
	admitSource string
	//go:embed put.lua
	putSource string
	//go:embed counts.lua
	countsSource string
	//go:embed claim.lua
	claimSource string
	//go:embed settle.lua
	settleSource string
	//go:embed forget.lua
	forgetSource string

	joinScript   = redis.NewScript(common + joinSource)
	placesScript = redis.NewScript(common + placesSource)
	leaveScript  = redis.NewScript(common + leaveSource)
	admitScript  = redis.NewScript(common + admitSource)
	putScript    = redis.NewScript(common + putSource)
	countsScript = redis.NewScript(common + countsSource)
	claimScript  = redis.NewScript(claimSource)
	settleScript = redis.NewScript(settleSource)
	forgetScript = redis.NewScript(forgetSource)
)

// Keys outside any one queue, after the namespace. The due queues and
// their counts share a hash tag: one script keeps both.
const (
	queuesKey      = "queue:schedules"
	changesChannel = "queue:changed"
	dueKey         = "queue:{due}:at"
	countsKey      = "queue:{due}:counts"
)

// DefaultReplicaTimeout bounds a write's WAIT for its replicas.
const DefaultReplicaTimeout = time.Second

// DefaultReplicaGrace is how long writes without their replicas are
// refused before the master's word is taken alone.
const DefaultReplicaGrace = 5 * time.Second

// Config tunes a Store.
type Config struct {
	// Namespace prefixes every key and the change channel: deployments
	// (or tests) sharing one Redis keep their queues apart, and each
	// admits only its own.
	Namespace string
	// Replicas is how many replicas must have a write before it is
	// acknowledged (0: the master's word is enough). Not with a Redis
	// Cluster client.
	Replicas int
	// ReplicaTimeout bounds each WAIT (DefaultReplicaTimeout when 0);
	// ReplicaGrace (DefaultReplicaGrace when 0) is how long writes that
	// miss their replicas are refused before they go on without them.
	ReplicaTimeout time.Duration
	ReplicaGrace   time.Duration
	Logger         *slog.Logger
}

// Store is a waitroom.Store on Redis.
type Store struct {
	rdb redis.UniversalClient
	cfg Config
	log *slog.Logger
	// replicas judges the writes that want replicas (Config.Replicas).
	replicas *redisconn.Replicas
}

var _ waitroom.Store = (*Store)(nil)

// New returns a Store on rdb.
func New(rdb redis.UniversalClient, cfg Config) *Store {
	if cfg.ReplicaTimeout <= 0 {
		cfg.ReplicaTimeout = DefaultReplicaTimeout
	}
	if cfg.ReplicaGrace <= 0 {
		cfg.ReplicaGrace = DefaultReplicaGrace
	}
	s := &Store{rdb: rdb, cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.replicas = redisconn.NewReplicas(cfg.Replicas, cfg.ReplicaTimeout, cfg.ReplicaGrace, "waiting room: writes", s.log)
	return s
}

// keys are a schedule's queue's keys, in the scripts' order.
func (s *Store) keys(scheduleID int64) []string {
	tag := s.cfg.Namespace + "queue:{" + strconv.FormatInt(scheduleID, 10) + "}:"
	return []string{tag + "meta", tag + "users", tag + "tickets", tag + "line", tag + "active", tag + "gone"}
}

// Put implements waitroom.Store.
func (s *Store) Put(ctx context.Context, scheduleID int64, set waitroom.Settings) error {
	reply, err := s.write(ctx, putScript, s.keys(scheduleID), scheduleID, set.OpensAt.UnixMilli(), set.AdmitPerSecond, set.MaxActive, set.AdmissionTTL.Milliseconds())
	if err != nil {
		return err
	}
	if n, _ := reply.(int64); n == 0 {
		return waitroom.ErrQueueOpened
	}
	if err := s.rdb.SAdd(ctx, s.cfg.Namespace+queuesKey, scheduleID).Err(); err != nil {
		return unavailable(err)
	}
	s.announce(ctx, scheduleID)
	return nil
}

// Delete implements waitroom.Store.
func (s *Store) Delete(ctx context.Context, scheduleID int64) error {
	k := s.keys(scheduleID)
	removed, err := s.rdb.Unlink(ctx, k...).Result()
	if err != nil {
		return unavailable(err)
	}
	if err := s.rdb.SRem(ctx, s.cfg.Namespace+queuesKey, scheduleID).Err(); err != nil {
		return unavailable(err)
	}
	if err := forgetScript.Run(ctx, s.rdb, s.dueKeys(), scheduleID).Err(); err != nil {
		return unavailable(err)
	}
	if _, err := s.write(ctx, nil, nil, 0); err != nil {
		return err
	}
	s.announce(ctx, scheduleID)
	if removed == 0 {
		return waitroom.ErrQueueNotFound
	}
	return nil
}

// announce tells every instance that a queue changed; one that misses it
// reads the queue again within its cache's time anyway.
func (s *Store) announce(ctx context.Context, scheduleID int64) {
	if err := s.rdb.Publish(ctx, s.cfg.Namespace+changesChannel, scheduleID).Err(); err != nil {
		s.log.Warn("waiting room: announcing a change", "schedule", scheduleID, "error", err)
	}
}

// Queued implements waitroom.Store: the queue's settings exist.
func (s *Store) Queued(ctx context.Context, scheduleID int64) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.keys(scheduleID)[0]).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}

// Counts implements waitroom.Store.
func (s *Store) Counts(ctx context.Context, scheduleID int64) (waitroom.Snapshot, waitroom.Counts, error) {
	reply, err := countsScript.Run(ctx, s.rdb, s.keys(scheduleID)).Slice()
	if err != nil {
		return waitroom.Snapshot{}, waitroom.Counts{}, queueErr(err)
	}
	snap, rest, err := snapshot(reply)
	if err != nil || len(rest) != 3 {
		return waitroom.Snapshot{}, waitroom.Counts{}, malformed(reply, err)
	}
	var c waitroom.Counts
	inLine := toInt(rest[0])
	if snap.Now.Before(snap.Settings.OpensAt) {
		c.Prequeue = inLine
	} else {
		c.Waiting = inLine
	}
	c.Active, c.Admitted = toInt(rest[1]), toInt(rest[2])
	return snap, c, nil
}

// Join implements waitroom.Store.
func (s *Store) Join(ctx context.Context, scheduleID int64, userID, ticket string, prequeueKey float64) (string, waitroom.Snapshot, bool, error) {
	v, err := s.write(ctx, joinScript, s.keys(scheduleID), scheduleID, userID, ticket, strconv.FormatFloat(prequeueKey, 'g', 17, 64))
	if err != nil {
		return "", waitroom.Snapshot{}, false, err
	}
	reply, ok := v.([]any)
	if !ok || len(reply) < 2 {
		return "", waitroom.Snapshot{}, false, malformed(v, nil)
	}
	snap, err := placesSnapshot(reply[2:])
	if err != nil {
		return "", snap, false, err
	}
	return toString(reply[1]), snap, toInt(reply[0]) == 1, nil
}

// Places implements waitroom.Store.
func (s *Store) Places(ctx context.Context, scheduleID int64, tickets ...string) (waitroom.Snapshot, error) {
	args := make([]any, len(tickets))
	for i, t := range tickets {
		args[i] = t
	}
	reply, err := placesScript.Run(ctx, s.rdb, s.keys(scheduleID), args...).Slice()
	if err != nil {
		return waitroom.Snapshot{}, queueErr(err)
	}
	return placesSnapshot(reply)
}

// Leave implements waitroom.Store.
func (s *Store) Leave(ctx context.Context, scheduleID int64, ticket, userID string) (waitroom.Snapshot, error) {
	v, err := s.write(ctx, leaveScript, s.keys(scheduleID), scheduleID, ticket, userID)
	if err != nil {
		return waitroom.Snapshot{}, err
	}
	reply, _ := v.([]any)
	if len(reply) == 0 {
		return waitroom.Snapshot{}, waitroom.ErrTicketNotFound
	}
	return placesSnapshot(reply)
}

// Admitted implements waitroom.Store.
func (s *Store) Admitted(ctx context.Context, scheduleID int64, ticket string) (bool, error) {
	err := s.rdb.ZScore(ctx, s.keys(scheduleID)[4], ticket).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, unavailable(err)
	}
	return true, nil
}

// Changes implements waitroom.Store. go-redis subscribes again after a
// lost connection (a failover) by itself.
func (s *Store) Changes(ctx context.Context, changed func(scheduleID int64)) {
	sub := s.rdb.Subscribe(ctx, s.cfg.Namespace+changesChannel)
	defer func() { _ = sub.Close() }()
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			if id, err := strconv.ParseInt(msg.Payload, 10, 64); err == nil {
				changed(id)
			}
		}
	}
}

// write runs a script that changes a queue (none: only waits for the
// replicas), marks the queue due (unless mark is 0: see AdmitDue) and,
// with Config.Replicas, waits for them: see exec.
func (s *Store) write(ctx context.Context, script *redis.Script, keys []string, mark int64, args ...any) (any, error) {
	var calls []scriptCall
	if script != nil {
		calls = append(calls, scriptCall{script, keys, args})
	}
	cmds, err := s.exec(ctx, calls, mark)
	if err != nil || script == nil {
		return nil, err
	}
	v, err := cmds[0].Result()
	return v, queueErr(err)
}

func isNoScript(err error) bool { return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") }

// queueErr maps a script's nil reply (no queue) to ErrQueueNotFound and
// any other failure to ErrUnavailable.
func queueErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return waitroom.ErrQueueNotFound
	default:
		return unavailable(err)
	}
}

func unavailable(err error) error {
	return fmt.Errorf("redisroom: %w: %w", reservation.ErrUnavailable, err)
}

func malformed(reply any, err error) error {
	return fmt.Errorf("redisroom: unexpected reply %v: %v", reply, err)
}

// snapshot reads reply()'s settings part: now, opensAt, rate, maxActive,
// ttl, observed rate, active.
func snapshot(reply []any) (waitroom.Snapshot, []any, error) {
	if len(reply) < 7 {
		return waitroom.Snapshot{}, nil, errors.New("short reply")
	}
	observed, _ := strconv.ParseFloat(toString(reply[5]), 64)
	return waitroom.Snapshot{
		Now: time.UnixMilli(toInt(reply[0])),
		Settings: waitroom.Settings{OpensAt: time.UnixMilli(toInt(reply[1])), AdmitPerSecond: int(toInt(reply[2])),
			MaxActive: int(toInt(reply[3])), AdmissionTTL: time.Duration(toInt(reply[4])) * time.Millisecond},
		ObservedRate: observed,
		Active:       toInt(reply[6]),
	}, reply[7:], nil
}

// placesSnapshot reads reply() with its places, four values each.
func placesSnapshot(reply []any) (waitroom.Snapshot, error) {
	snap, rest, err := snapshot(reply)
	if err != nil || len(rest)%4 != 0 {
		return snap, malformed(reply, err)
	}
	for i := 0; i < len(rest); i += 4 {
		if rest[i] == nil {
			snap.Places = append(snap.Places, waitroom.Place{})
			continue
		}
		p := waitroom.Place{Found: true, UserID: toString(rest[i]), State: waitroom.State(toString(rest[i+1])),
			Position: int(toInt(rest[i+2]))}
		if exp := toInt(rest[i+3]); exp > 0 {
			p.Expires = time.UnixMilli(exp)
		}
		snap.Places = append(snap.Places, p)
	}
	return snap, nil
}

// toInt reads an integer reply, or a number sent as a string.
func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return int64(f)
	}
	return 0
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
