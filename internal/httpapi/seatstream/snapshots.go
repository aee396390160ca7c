package seatstream

import (
	"context"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// snapshotTTL is how long a rendered seat map snapshot is reused.
const snapshotTTL = time.Second

// snapshotRenderTimeout bounds reading a seat map for a snapshot.
const snapshotRenderTimeout = 5 * time.Second

// maxSnapshots bounds the snapshots kept; past it the cache starts over.
const maxSnapshots = 256

// snapshots shares the snapshot of a seat map between the streams that
// start at the same position of the schedule's feed: a thousand browsers
// reconnecting at once (an instance restarted) cost one query, not a
// thousand. Keyed by the feed's head, a snapshot is as good for a later
// stream as for the first: every change published after it has a later
// id and reaches both.
type snapshots struct {
	flight singleflight.Group
	mu     sync.Mutex
	kept   map[string]keptSnapshot
}

type keptSnapshot struct {
	data []byte
	at   time.Time
}

// get returns the snapshot of scheduleID at head, rendering it with
// render when none is kept.
func (s *snapshots) get(ctx context.Context, scheduleID int64, head string, render func(context.Context) ([]byte, error)) ([]byte, error) {
	key := strconv.FormatInt(scheduleID, 10) + "/" + head
	s.mu.Lock()
	if k, ok := s.kept[key]; ok && time.Since(k.at) < snapshotTTL {
		s.mu.Unlock()
		return k.data, nil
	}
	s.mu.Unlock()
	v, err, _ := s.flight.Do(key, func() (any, error) {
		// Shared by every stream waiting for it: not ended by the first
		// one's client leaving.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), snapshotRenderTimeout)
		defer cancel()
		data, err := render(rctx)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.kept == nil || len(s.kept) >= maxSnapshots {
			s.kept = map[string]keptSnapshot{}
		}
		s.kept[key] = keptSnapshot{data: data, at: time.Now()}
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}
