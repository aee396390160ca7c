package waitroom

import (
	"context"
	"time"
)

// Watch follows one ticket: C has its latest state (a newer one replaces
// one not yet taken), read every WatchEvery with every other ticket this
// instance watches, of every schedule, in one call to the store. C is
// closed when the queue is gone. Close it.
type Watch struct {
	C          <-chan Ticket
	c          chan Ticket
	scheduleID int64
	ticket     string
	user       string
}

// Watch starts following userID's ticket; it returns the ticket as it
// stands now.
func (r *Room) Watch(ctx context.Context, ticketID, userID string) (*Watch, Ticket, error) {
	t, err := r.Ticket(ctx, ticketID, userID)
	if err != nil {
		return nil, t, err
	}
	c := make(chan Ticket, 1)
	wt := &Watch{C: c, c: c, scheduleID: t.ScheduleID, ticket: ticketID, user: userID}
	r.mu.Lock()
	if len(r.watches) == 0 {
		go r.follow()
	}
	r.watches[wt] = struct{}{}
	r.mu.Unlock()
	return wt, t, nil
}

// Unwatch stops following w's ticket.
func (r *Room) Unwatch(wt *Watch) {
	r.mu.Lock()
	delete(r.watches, wt)
	r.mu.Unlock()
}

// follow reads the watched tickets every WatchEvery until none is
// watched: one goroutine and one call an instance, however many schedules
// its buyers wait for.
func (r *Room) follow() {
	tick := time.NewTicker(r.cfg.WatchEvery)
	defer tick.Stop()
	for range tick.C {
		r.mu.Lock()
		if len(r.watches) == 0 {
			r.mu.Unlock()
			return
		}
		watches := make(map[int64][]*Watch)
		tickets := make(map[int64][]string)
		for wt := range r.watches {
			watches[wt.scheduleID] = append(watches[wt.scheduleID], wt)
			tickets[wt.scheduleID] = append(tickets[wt.scheduleID], wt.ticket)
		}
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.WatchEvery*4)
		snaps, err := r.store.PlacesOf(ctx, tickets)
		cancel()
		if err != nil {
			continue // the next read may succeed: the streams wait
		}
		for scheduleID, ws := range watches {
			snap, found := snaps[scheduleID]
			if !found {
				r.closeWatches(ws)
				continue
			}
			r.send(scheduleID, ws, snap)
		}
	}
}

// closeWatches ends the watches of a queue that is gone.
func (r *Room) closeWatches(ws []*Watch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, wt := range ws {
		if _, still := r.watches[wt]; still {
			delete(r.watches, wt)
			close(wt.c)
		}
	}
}

// send gives each watch its ticket as snap has it.
func (r *Room) send(scheduleID int64, ws []*Watch, snap Snapshot) {
	if len(snap.Places) != len(ws) {
		return
	}
	for i, wt := range ws {
		p := snap.Places[i]
		if !p.Found || p.UserID != wt.user {
			continue
		}
		t := r.ticket(scheduleID, wt.ticket, snap, p)
		select {
		case <-wt.c:
		default:
		}
		wt.c <- t
	}
}
