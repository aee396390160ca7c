package redisroom

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/waitroom"
)

// The due queues: a sorted set of the schedules whose queue has work for a
// round of admission, scored by when (ms of Redis's clock; 0: now). A
// queue with nobody in line and no admission running is not in it, so it
// costs no call at all. A join, a leave or a change of a queue's settings
// marks the queue due (ZADD LT 0) right after its script, in the same
// pipeline; a round claims what is due (claim.lua), runs the admission of
// each claimed queue in one pipeline, and sets when each is next due
// (settle.lua) unless it was marked meanwhile.
const (
	// ClaimFor is how long a round's claim on the queues it runs keeps
	// every other round off them. It is below the second's worth of
	// admissions a queue pays at once, so a round that dies with its
	// claim costs its queues a pause and no admission.
	ClaimFor = 500 * time.Millisecond
	// MaxClaim is the most queues one round runs; the rest stay due for
	// the next round (of any instance).
	MaxClaim = 1000
)

func (s *Store) dueKeys() []string {
	return []string{s.cfg.Namespace + dueKey, s.cfg.Namespace + countsKey}
}

// scriptCall is one run of a script in a pipeline.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
}

// exec runs calls in one pipeline (one per node of a Redis Cluster), then
// marks the queue of mark due (0: none), and with Config.Replicas a WAIT
// for them, all on one connection: WAIT counts the replicas that have
// every write made on its connection, and the mark comes after the
// change it announces (a round that ran between them would otherwise
// settle the queue as having nothing to do). On a Redis Cluster the mark
// goes to another node, so it is sent once the calls are done. A write a
// failover could lose (see redisconn.Replicas) is refused instead, and
// retried by its client: a join by the same user finds its ticket. The
// calls' own errors are in their Cmds.
func (s *Store) exec(ctx context.Context, calls []scriptCall, mark int64) ([]*redis.Cmd, error) {
	_, cluster := s.rdb.(*redis.ClusterClient)
	if len(calls) == 0 && mark == 0 && s.cfg.Replicas == 0 {
		return nil, nil
	}
	if s.cfg.Replicas == 0 && (mark == 0 || cluster) && len(calls) == 1 {
		// One call alone: Run loads the script when Redis lacks it.
		c := calls[0]
		cmd := c.script.Run(ctx, s.rdb, c.keys, c.args...)
		if err := cmd.Err(); err != nil && !isScriptReply(err) {
			return nil, unavailable(err)
		}
		return []*redis.Cmd{cmd}, s.markAfter(ctx, mark, cluster)
	}
	wait := s.replicas.Begin()
	var marked *redis.IntCmd
	var waited *redis.Cmd
	cmds, err := s.pipelined(ctx, calls, func(p redis.Pipeliner) {
		if mark != 0 && !cluster {
			marked = p.ZAddLT(ctx, s.cfg.Namespace+dueKey, redis.Z{Member: mark})
		}
		if s.cfg.Replicas > 0 {
			waited = p.Do(ctx, "WAIT", s.cfg.Replicas, wait.Timeout.Milliseconds())
		}
	})
	if err != nil {
		return nil, err
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil && !isScriptReply(err) {
			return nil, unavailable(err)
		}
	}
	if marked != nil && marked.Err() != nil {
		return nil, unavailable(marked.Err())
	}
	if waited != nil {
		acked, err := waited.Int()
		if err != nil {
			return nil, unavailable(err)
		}
		if err := wait.Judge(acked); err != nil {
			return nil, unavailable(err)
		}
	}
	return cmds, s.markAfter(ctx, mark, cluster)
}

// markAfter marks the queue of mark due when exec could not in its
// pipeline (a Redis Cluster).
func (s *Store) markAfter(ctx context.Context, mark int64, cluster bool) error {
	if mark == 0 || !cluster {
		return nil
	}
	if err := s.rdb.ZAddLT(ctx, s.cfg.Namespace+dueKey, redis.Z{Member: mark}).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

// pipelined runs calls in one pipeline, then what after adds to it; when
// Redis lacked a script, it loads it and runs the pipeline again. The
// commands' own errors are theirs to report.
func (s *Store) pipelined(ctx context.Context, calls []scriptCall, after func(redis.Pipeliner)) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	pipe := func(p redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = p.EvalSha(ctx, c.script.Hash(), c.keys, c.args...)
		}
		if after != nil {
			after(p)
		}
		return nil
	}
	_, _ = s.rdb.Pipelined(ctx, pipe)
	if loaded, err := s.loadMissing(ctx, calls, cmds); err != nil {
		return nil, err
	} else if loaded {
		_, _ = s.rdb.Pipelined(ctx, pipe)
	}
	return cmds, nil
}

// loadMissing loads the scripts Redis did not have (after a restart or a
// failover to a replica that never ran them): true when it loaded any.
func (s *Store) loadMissing(ctx context.Context, calls []scriptCall, cmds []*redis.Cmd) (bool, error) {
	loaded := map[*redis.Script]bool{}
	for i, c := range cmds {
		if !isNoScript(c.Err()) || loaded[calls[i].script] {
			continue
		}
		if err := calls[i].script.Load(ctx, s.rdb).Err(); err != nil {
			return false, unavailable(err)
		}
		loaded[calls[i].script] = true
	}
	return len(loaded) > 0, nil
}

// isScriptReply reports an error that is a script's answer rather than a
// failure to reach Redis: its nil reply (no queue).
func isScriptReply(err error) bool { return errors.Is(err, redis.Nil) }

// AdmitDue implements waitroom.Store.
func (s *Store) AdmitDue(ctx context.Context, every time.Duration) (waitroom.Rounds, error) {
	keys := s.dueKeys()
	reply, err := claimScript.Run(ctx, s.rdb, keys, ClaimFor.Milliseconds(), MaxClaim).Slice()
	if err != nil {
		return waitroom.Rounds{}, unavailable(err)
	}
	if len(reply) < 4 {
		return waitroom.Rounds{}, malformed(reply, nil)
	}
	rounds := waitroom.Rounds{InLine: toInt(reply[2]), Active: toInt(reply[3])}
	claimed := reply[4:]
	if len(claimed) == 0 {
		return rounds, nil
	}
	ids := make([]int64, 0, len(claimed))
	calls := make([]scriptCall, 0, len(claimed))
	for _, v := range claimed {
		id, err := strconv.ParseInt(toString(v), 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
		calls = append(calls, scriptCall{admitScript, s.keys(id), nil})
	}
	cmds, err := s.exec(ctx, calls, 0)
	if err != nil {
		// The claims lapse: the queues are due again after ClaimFor.
		return rounds, err
	}
	rounds.Queues = make(map[int64]waitroom.Round, len(ids))
	settle := []any{toInt(reply[0]), toInt(reply[1]) + every.Milliseconds()}
	for i, id := range ids {
		v, err := cmds[i].Result()
		if errors.Is(err, redis.Nil) {
			settle = append(settle, id, -2, 0, 0)
			continue
		}
		r, next, err := admitReply(v)
		if err != nil {
			return rounds, err
		}
		rounds.Queues[id] = r
		settle = append(settle, id, next, r.InLine, r.Active)
	}
	totals, err := settleScript.Run(ctx, s.rdb, keys, settle...).Int64Slice()
	if err != nil {
		return rounds, unavailable(err)
	}
	if len(totals) == 2 {
		rounds.InLine, rounds.Active = totals[0], totals[1]
	}
	return rounds, nil
}

// admitReply reads admit.lua's reply: the round, and when the queue is
// next due (-1: not until marked).
func admitReply(v any) (waitroom.Round, int64, error) {
	reply, ok := v.([]any)
	if !ok || len(reply) < 6 {
		return waitroom.Round{}, 0, malformed(v, nil)
	}
	r := waitroom.Round{Admitted: int(toInt(reply[0])), InLine: toInt(reply[1]), Open: toInt(reply[2]) == 1,
		Active: toInt(reply[3]), AdmittedTotal: toInt(reply[4])}
	for _, w := range reply[6:] {
		r.Waits = append(r.Waits, time.Duration(toInt(w))*time.Millisecond)
	}
	return r, toInt(reply[5]), nil
}

// MarkWaiting implements waitroom.Store: a pipeline of ZCARD of every
// queue's line (a thousand at a time), then the mark of those with
// buyers in it.
func (s *Store) MarkWaiting(ctx context.Context) error {
	members, err := s.rdb.SMembers(ctx, s.cfg.Namespace+queuesKey).Result()
	if err != nil {
		return unavailable(err)
	}
	const batch = 1000
	for len(members) > 0 {
		n := min(batch, len(members))
		cards := make([]*redis.IntCmd, n)
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, m := range members[:n] {
				id, _ := strconv.ParseInt(m, 10, 64)
				cards[i] = p.ZCard(ctx, s.keys(id)[3])
			}
			return nil
		})
		if err != nil {
			return unavailable(err)
		}
		var waiting []redis.Z
		for i, m := range members[:n] {
			if cards[i].Val() > 0 {
				waiting = append(waiting, redis.Z{Member: m})
			}
		}
		if len(waiting) > 0 {
			if err := s.rdb.ZAddLT(ctx, s.cfg.Namespace+dueKey, waiting...).Err(); err != nil {
				return unavailable(err)
			}
		}
		members = members[n:]
	}
	return nil
}
