package seatfeed

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/redisbatch"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Change is one committed seat change as the outbox relay appends it.
type Change struct {
	// Pos is the change's commit position (its seat_changes id): for one
	// seat, positions grow with the order of its commits. A stream entry
	// carries it as the field pos, and a consumer de-duplicates by it.
	Pos    int64
	SeatID int
	Status reservation.SeatStatus
}

// ScheduleChanges are changes of one schedule, in position order.
type ScheduleChanges struct {
	ScheduleID int64
	Changes    []Change
}

// PosKey is the Redis key of the hash that keeps, per seat of a schedule,
// the position of the last change appended to its stream. It shares the
// stream's hash tag, so both are in one Redis Cluster slot.
func PosKey(scheduleID int64) string {
	return "seatmap-pos:{schedule:" + strconv.FormatInt(scheduleID, 10) + "}"
}

// appendScript appends a schedule's changes to its stream, skipping each
// change whose position is not above the last appended for its seat: a
// re-delivery (the relay died between appending and deleting its rows) or
// a stale relay's late batch. KEYS: the stream, the positions hash. ARGV:
// MAXLEN, retention in ms, then seat, status, pos for each change. It
// returns how many entries it added.
var appendScript = redis.NewScript(`
local added = 0
for i = 3, #ARGV, 3 do
	local seat, status, pos = ARGV[i], ARGV[i + 1], ARGV[i + 2]
	local last = tonumber(redis.call('HGET', KEYS[2], seat) or '0')
	if tonumber(pos) > last then
		redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'seat', seat, 'status', status, 'pos', pos)
		redis.call('HSET', KEYS[2], seat, pos)
		added = added + 1
	end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return added
`)

// Append appends the changes of each schedule to its stream, each schedule
// in one script call (atomic: de-duplication and appends together) and all
// of them in one pipelined round trip (a Redis Cluster pipeline is split by
// node; a schedule's keys share a slot). It returns how many entries were
// added; the others were appended before. On error some schedules may have
// been appended and others not: appending the same changes again is safe.
// With Config.Replicas, Append reports success only once that many
// replicas have the appends (see appendReplicated). Every failure to reach Redis, and an append
// the replicas did not acknowledge, wraps reservation.ErrUnavailable.
func (f *Feed) Append(ctx context.Context, batches []ScheduleChanges) (added int, err error) {
	cmds := make([]redisbatch.Command, 0, len(batches))
	for _, b := range batches {
		if len(b.Changes) == 0 {
			continue
		}
		args := make([]any, 0, 2+3*len(b.Changes))
		args = append(args, f.cfg.MaxLen, f.cfg.Retention.Milliseconds())
		for _, c := range b.Changes {
			args = append(args, c.SeatID, string(c.Status), c.Pos)
		}
		cmds = append(cmds, redisbatch.Command{Script: appendScript,
			Keys: []string{StreamKey(b.ScheduleID), PosKey(b.ScheduleID)}, Args: args})
	}
	if len(cmds) == 0 {
		return 0, nil
	}
	if f.cfg.Replicas > 0 {
		return f.appendReplicated(ctx, cmds)
	}
	for _, reply := range f.pipeline.Do(ctx, cmds...) {
		n, err := reply.Int()
		if err != nil {
			return added, appendFailed(err)
		}
		added += n
	}
	return added, nil
}

// appendReplicated sends the appends and a WAIT for cfg.Replicas replicas
// in one pipeline, on one connection: WAIT counts the replicas that have
// every write made on its own connection. The relay deletes outbox rows
// once Append succeeds, so an append a failover loses (see
// redisconn.Replicas) would be a seat event lost for every watcher;
// refused instead, it is appended again on the new master (the positions
// skip what did arrive), for cfg.ReplicaGrace at most.
func (f *Feed) appendReplicated(ctx context.Context, cmds []redisbatch.Command) (added int, err error) {
	wait := f.replicas.Begin()
	for attempt := 0; ; attempt++ {
		var scripts []*redis.Cmd
		var waited *redis.Cmd
		_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			scripts = make([]*redis.Cmd, len(cmds))
			for i, c := range cmds {
				scripts[i] = p.EvalSha(ctx, c.Script.Hash(), c.Keys, c.Args...)
			}
			waited = p.Do(ctx, "WAIT", f.cfg.Replicas, wait.Timeout.Milliseconds())
			return nil
		})
		if attempt == 0 && slices.ContainsFunc(scripts, func(c *redis.Cmd) bool { return isNoScript(c.Err()) }) {
			if err := appendScript.Load(ctx, f.rdb).Err(); err != nil {
				return 0, appendFailed(err)
			}
			continue
		}
		for _, reply := range scripts {
			n, err := reply.Int()
			if err != nil {
				return added, appendFailed(err)
			}
			added += n
		}
		if err != nil {
			return added, appendFailed(err)
		}
		acked, _ := waited.Int()
		if err := wait.Judge(acked); err != nil {
			return added, appendFailed(err)
		}
		return added, nil
	}
}

// appendFailed is an append's failure to reach Redis, as ErrUnavailable.
func appendFailed(err error) error {
	return fmt.Errorf("seatfeed: append: %w: %w", reservation.ErrUnavailable, err)
}

func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}
