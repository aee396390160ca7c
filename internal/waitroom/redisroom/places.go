package redisroom

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/waitroom"
)

// PlacesOf implements waitroom.Store: one pipeline of places.lua, a run
// for each schedule.
func (s *Store) PlacesOf(ctx context.Context, tickets map[int64][]string) (map[int64]waitroom.Snapshot, error) {
	ids := make([]int64, 0, len(tickets))
	calls := make([]scriptCall, 0, len(tickets))
	for id, ts := range tickets {
		args := make([]any, len(ts))
		for i, t := range ts {
			args[i] = t
		}
		ids = append(ids, id)
		calls = append(calls, scriptCall{placesScript, s.keys(id), args})
	}
	cmds, err := s.pipelined(ctx, calls, nil)
	if err != nil {
		return nil, err
	}
	snaps := make(map[int64]waitroom.Snapshot, len(ids))
	for i, id := range ids {
		v, err := cmds[i].Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return nil, unavailable(err)
		}
		reply, ok := v.([]any)
		if !ok {
			return nil, malformed(v, nil)
		}
		snap, err := placesSnapshot(reply)
		if err != nil {
			return nil, err
		}
		snaps[id] = snap
	}
	return snaps, nil
}
