package waitroom

import (
	"context"
	"errors"
	"time"
)

// Watch follows one ticket: C has its latest state (a newer one replaces
// one not yet taken), read every WatchEvery with every other ticket of the
// schedule this instance watches, in one call to the store. C is closed
// when the queue is gone. Close it.
type Watch struct {
	C      <-chan Ticket
	c      chan Ticket
	ticket string
	user   string
	w      *watcher
}

// watcher reads the watched tickets of one schedule.
type watcher struct {
	scheduleID int64
	watches    map[*Watch]struct{}
}

// Watch starts following userID's ticket; it returns the ticket as it
// stands now.
func (r *Room) Watch(ctx context.Context, ticketID, userID string) (*Watch, Ticket, error) {
	t, err := r.Ticket(ctx, ticketID, userID)
	if err != nil {
		return nil, t, err
	}
	c := make(chan Ticket, 1)
	wt := &Watch{C: c, c: c, ticket: ticketID, user: userID}
	r.mu.Lock()
	w := r.watchers[t.ScheduleID]
	if w == nil {
		w = &watcher{scheduleID: t.ScheduleID, watches: map[*Watch]struct{}{}}
		r.watchers[t.ScheduleID] = w
		go r.follow(w)
	}
	wt.w = w
	w.watches[wt] = struct{}{}
	r.mu.Unlock()
	return wt, t, nil
}

// Unwatch stops following w's ticket.
func (r *Room) Unwatch(wt *Watch) {
	r.mu.Lock()
	delete(wt.w.watches, wt)
	r.mu.Unlock()
}

// follow reads the watched tickets of w's schedule every WatchEvery until
// none is watched.
func (r *Room) follow(w *watcher) {
	tick := time.NewTicker(r.cfg.WatchEvery)
	defer tick.Stop()
	for range tick.C {
		r.mu.Lock()
		if len(w.watches) == 0 {
			delete(r.watchers, w.scheduleID)
			r.mu.Unlock()
			return
		}
		watches := make([]*Watch, 0, len(w.watches))
		tickets := make([]string, 0, len(w.watches))
		for wt := range w.watches {
			watches = append(watches, wt)
			tickets = append(tickets, wt.ticket)
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.WatchEvery*4)
		snap, err := r.store.Places(ctx, w.scheduleID, tickets...)
		cancel()
		if errors.Is(err, ErrQueueNotFound) {
			r.mu.Lock()
			for _, wt := range watches {
				if _, still := w.watches[wt]; still {
					delete(w.watches, wt)
					close(wt.c)
				}
			}
			r.mu.Unlock()
			continue
		}
		if err != nil || len(snap.Places) != len(watches) {
			continue // the next read may succeed: the streams wait
		}
		for i, wt := range watches {
			p := snap.Places[i]
			if !p.Found || p.UserID != wt.user {
				continue
			}
			t := r.ticket(w.scheduleID, wt.ticket, snap, p)
			select {
			case <-wt.c:
			default:
			}
			wt.c <- t
		}
	}
}
