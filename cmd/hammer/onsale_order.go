package main

// The order of admission, as the buyers can see it. The line's order is
// never shown whole: a buyer sees their position now and then. What the
// sightings prove:
//
//   - Positions only fall: after the opening nobody joins ahead of anyone
//     (the pre-queue is ordered at the opening, later joins go to the end),
//     and the line moves up as the head is admitted. So a ticket A seen
//     at position pA by an answer that came before ticket B's request at
//     position pB went out, with pA < pB, was ahead of B: B's position
//     was pB or more when A's was pA.
//   - Every pre-queue ticket is ahead of every ticket that joined after
//     the opening.
//
// And what polling can prove of an admission: B's was no later than the
// answer that showed it; A was still in line when the last poll that
// found it there went out (or some time after). An inversion is a ticket
// B admitted while one definitely ahead of it was definitely still in
// line: B's admission seen before the last poll that still found A in
// line was sent. That allows for the polling's granularity exactly, A's
// own: the interval between A's last poll in line and its first admitted
// one. Counted per ticket B (however many were ahead of it), in
// O(n log n): a sweep over the sightings in time order with a
// prefix-maximum tree over positions.

import (
	"slices"
	"time"
)

// lineSighting is what one buyer saw of their ticket's place in line.
type lineSighting struct {
	Prequeue bool
	// Position is the ticket's first position seen (0: never seen
	// waiting), by the answer to a request sent at Sent that came at At.
	Position int
	Sent, At time.Time
	// InLine is when the last request that found the ticket still in
	// line (pre-queue or waiting) was sent; zero if none did.
	InLine time.Time
	// Admitted is when the first answer that showed the ticket admitted
	// came; zero if none did.
	Admitted time.Time
}

// orderCheck is what the sweep found: Compared counts the admitted tickets
// that had a ticket definitely ahead of them; Inversions those admitted
// while one such was still in line, the worst by Lead (how long before
// the other's last sighting in line its admission was seen).
type orderCheck struct {
	Compared   int      `json:"compared"`
	Inversions int      `json:"inversions"`
	Lead       duration `json:"worstLeadMs"`
}

// checkOrder counts the inversions among the sightings.
func checkOrder(tickets []lineSighting) orderCheck {
	var prequeueInLine time.Time // the latest any pre-queue ticket was seen in line
	maxPos := 0
	for _, t := range tickets {
		if t.Prequeue && t.InLine.After(prequeueInLine) {
			prequeueInLine = t.InLine
		}
		maxPos = max(maxPos, t.Position)
	}
	// The sweep: a ticket's sighting enters the tree when its answer came
	// (insert), and an admitted ticket asks, when its request went out,
	// for the latest in-line time of the tickets seen ahead of it.
	type event struct {
		at     time.Time
		insert bool
		i      int
	}
	var events []event
	for i, t := range tickets {
		if t.Position <= 0 {
			continue
		}
		events = append(events, event{at: t.At, insert: true, i: i})
		if !t.Admitted.IsZero() {
			events = append(events, event{at: t.Sent, i: i})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		switch { // an answer that came as a request went out counts as before it
		case a.insert && !b.insert:
			return -1
		case b.insert && !a.insert:
			return 1
		}
		return 0
	})
	tree := newMaxTree(maxPos)
	ahead := make([]time.Time, len(tickets)) // the latest in-line time of a ticket ahead
	for _, e := range events {
		t := tickets[e.i]
		if e.insert {
			tree.raise(t.Position, t.InLine)
			continue
		}
		ahead[e.i] = tree.prefixMax(t.Position - 1)
	}
	var c orderCheck
	for i, t := range tickets {
		if t.Admitted.IsZero() {
			continue
		}
		latest := ahead[i]
		if !t.Prequeue && prequeueInLine.After(latest) {
			latest = prequeueInLine
		}
		if latest.IsZero() {
			continue
		}
		c.Compared++
		if t.Admitted.Before(latest) {
			c.Inversions++
			c.Lead = max(c.Lead, duration(latest.Sub(t.Admitted)))
		}
	}
	return c
}

// maxTree is a Fenwick tree of the latest time by position, 1..n.
type maxTree []time.Time

func newMaxTree(n int) maxTree { return make(maxTree, n+1) }

// raise makes position p's time at least at.
func (m maxTree) raise(p int, at time.Time) {
	for ; p < len(m); p += p & -p {
		if at.After(m[p]) {
			m[p] = at
		}
	}
}

// prefixMax is the latest time of positions 1..p.
func (m maxTree) prefixMax(p int) time.Time {
	var latest time.Time
	for ; p > 0; p -= p & -p {
		if m[p].After(latest) {
			latest = m[p]
		}
	}
	return latest
}
