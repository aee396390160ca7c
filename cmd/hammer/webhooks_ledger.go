package main

import (
	"maps"
	"sync"
	"time"
)

// ledger is what the hammer knows the service committed: every change it
// was answered 2xx for, and when that answer came. Each one owes every
// receiver a message; one that never comes is lost. Changes the hammer
// did not make (a hold expiring, another client's bookings) are not in it
// and are only counted.
type ledger struct {
	mu      sync.Mutex
	changes map[change]time.Time
}

func newLedger() *ledger { return &ledger{changes: map[change]time.Time{}} }

// commit records a change answered 2xx at at; the first answer of a
// change counts (an owner asking again for their seat gets the same
// reservation).
func (l *ledger) commit(object, eventType string, at time.Time) {
	if object == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := change{Object: object, Type: eventType}
	if prev, ok := l.changes[c]; !ok || at.Before(prev) {
		l.changes[c] = at
	}
}

// commitBookings records each reservation answered 200 among outcomes.
func (l *ledger) commitBookings(outcomes []outcome) {
	for _, o := range outcomes {
		if o.key() == keyOK {
			l.commit(o.Reservation, eventReservationCreated, o.At)
		}
	}
}

// commitSale records an on-sale's changes: each hold granted
// (hold.created), and each confirmed (hold.confirmed, and
// reservation.created for each reservation it made).
func (l *ledger) commitSale(runs []buyerRun) {
	for _, b := range runs {
		for _, h := range b.Holds {
			if h.granted() {
				l.commit(h.Hold, eventHoldCreated, h.At)
			}
		}
		if c := b.Confirmation; c != nil && len(b.Holds) > 0 {
			l.commit(b.Holds[len(b.Holds)-1].Hold, eventHoldConfirmed, c.At)
			for _, id := range c.Reservations {
				l.commit(id, eventReservationCreated, c.At)
			}
		}
	}
}

// snapshot is the changes so far.
func (l *ledger) snapshot() map[change]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.changes)
}
