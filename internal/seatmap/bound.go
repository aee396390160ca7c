package seatmap

import (
	"log/slog"
	"slices"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// bytesPerSeat is what a kept image holds for each seat: its status code,
// and whether it has an expected change (Image.expecting).
const bytesPerSeat = 2

// keptImageOverhead is what keeping an image costs besides its seats: the
// goroutine that applies its events, its subscription's buffer of batches
// and the feed's hub (BenchmarkKeptImageOverhead measures them), and, on
// a Redis Cluster, where each followed stream is read alone, the feed's
// connection that reads it, with its buffers.
const keptImageOverhead = 16 << 10

// weigh is what keeping schedule's image counts against Config.MaxBytes.
// The schedule's layout is not counted: the service's cache of schedules
// holds it whether an image is kept or not.
func weigh(schedule reservation.Schedule) int64 {
	return int64(schedule.SeatCount())*bytesPerSeat + keptImageOverhead
}

// bound drops kept images, the least recently asked for first, until
// they weigh no more than Config.MaxBytes; m.mu is held. The unwatched
// ones go first: a watched image (a live seat-map stream of its schedule
// on this instance) is read again at every stream's start and every
// resumption, and dropping it saves nothing of the feed's read, which
// follows its stream for the watchers anyway. Watched ones go too when
// they alone weigh more: the bound is what keeps the instance's memory in
// its limit, and a watched schedule whose image is not kept is listed
// from PostgreSQL at each read instead. The image of loaded, just loaded,
// stays, however much it weighs.
func (m *Images) bound(loaded int64) {
	if m.keptBytes <= m.cfg.MaxBytes {
		return
	}
	type candidate struct {
		id      int64
		e       *followedImage
		watched bool
		usedAt  time.Time
	}
	ids := make([]int64, 0, len(m.kept))
	for id := range m.kept {
		if id != loaded {
			ids = append(ids, id)
		}
	}
	watchers := m.feed.Watchers(ids)
	candidates := make([]candidate, len(ids))
	for i, id := range ids {
		e := m.kept[id]
		e.mu.Lock()
		candidates[i] = candidate{id: id, e: e, watched: watchers[i] > 0, usedAt: e.usedAt}
		e.mu.Unlock()
	}
	slices.SortFunc(candidates, func(a, b candidate) int {
		if a.watched != b.watched {
			if a.watched {
				return 1
			}
			return -1
		}
		return a.usedAt.Compare(b.usedAt)
	})
	for _, c := range candidates {
		if m.keptBytes <= m.cfg.MaxBytes {
			return
		}
		m.drop(c.id, c.e)
		if c.watched {
			m.cfg.Logger.Warn("seat images: the watched schedules' images weigh more than the bound; dropping the least recently read",
				slog.Int64("schedule", c.id), slog.Int64("max_bytes", m.cfg.MaxBytes))
		}
	}
}
