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

// snapshot is the changes so far.
func (l *ledger) snapshot() map[change]time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.changes)
}
