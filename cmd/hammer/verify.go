package main

import (
	"context"
	"fmt"
	"time"
)

// maxExamples bounds the examples an invariant report keeps of what broke.
const maxExamples = 5

// invariantReport is what the holds a phase was granted, the venue's
// layout and its seat map say together.
type invariantReport struct {
	// Holds counts the granted holds checked, Seats their seats.
	Holds int `json:"holds"`
	Seats int `json:"seats"`
	// SeatsInTwoHolds counts seats granted to more than one hold.
	SeatsInTwoHolds int `json:"seatsInTwoHolds"`
	// NotAdjacent counts holds whose seats are not consecutive in one row
	// though adjacent seats were asked for.
	NotAdjacent int `json:"notAdjacent"`
	// WrongCategory counts holds with a seat of another category than
	// the one asked for; NotInVenue those with a seat the venue lacks.
	WrongCategory int `json:"wrongCategory"`
	NotInVenue    int `json:"notInVenue"`
	// Examples shows a few of each kind of fault, by the name of its
	// count ("seatsInTwoHolds", "notAdjacent", ...).
	Examples map[string][]string `json:"examples,omitempty"`
	// Maps is each target's seat map against the granted holds.
	Maps []mapCheck `json:"seatMaps"`
	// Error says why the layout could not be read (nothing was checked).
	Error string `json:"error,omitempty"`
}

// mapCheck is one target's seat map of a venue after a phase: the held
// seats must be exactly the granted ones, and nothing reserved.
type mapCheck struct {
	Target string `json:"target"`
	seatMapCount
	// HeldNotGranted counts seats held that no 201 granted;
	// GrantedNotHeld granted seats the map does not show held; Missing
	// seats of the venue the map does not list.
	HeldNotGranted int `json:"heldNotGranted"`
	GrantedNotHeld int `json:"grantedNotHeld"`
	Missing        int `json:"missing"`
	// StrandedSingles counts the available seats whose neighbours in
	// their row are both taken (or the row's end).
	StrandedSingles int `json:"strandedSingles"`
}

// The kinds of fault checkHolds finds, as Examples names them.
const (
	faultTwoHolds    = "seatsInTwoHolds"
	faultNotAdjacent = "notAdjacent"
	faultCategory    = "wrongCategory"
	faultNotInVenue  = "notInVenue"
)

// phaseCheck is a phase's venue read back after it.
type phaseCheck struct {
	Invariant invariantReport
	venue     venue // as GET /schedules/{id} described it
}

// verifyPhase reads the phase's venue back (its layout from the first
// target, its seat map through every target, each until it shows every
// seat granted held: readSettled) and checks the granted holds against
// both: see checkHolds and checkMap.
func verifyPhase(ctx context.Context, a *api, cfg config, run phaseRun, adjacent bool, category string) phaseCheck {
	v, err := a.venue(ctx, cfg.Targets[0], run.venue.ID)
	if err != nil {
		return phaseCheck{Invariant: invariantReport{Error: err.Error()}, venue: run.venue}
	}
	inv := checkHolds(v, run.outcomes, adjacent, category)
	var granted []int
	for _, o := range run.outcomes {
		if o.granted() {
			granted = append(granted, o.Seats...)
		}
	}
	settled := time.Now().Add(mapSettleTime)
	for _, t := range cfg.Targets {
		statuses, err := a.readSettled(ctx, t, v.ID, settled, newPatience(), func(statuses map[int]string) bool {
			return showsAll(statuses, granted, "held")
		})
		inv.Maps = append(inv.Maps, checkMap(t, v, run.outcomes, statuses, err))
	}
	return phaseCheck{Invariant: inv, venue: v}
}

// checkHolds checks the granted holds against each other and the venue:
// no seat in two holds, every seat one of the venue's, and every hold's
// seats consecutive in one row when adjacent was asked, of category when
// one was.
func checkHolds(v venue, outcomes []holdOutcome, adjacent bool, category string) invariantReport {
	var inv invariantReport
	example := func(kind, format string, a ...any) {
		if inv.Examples == nil {
			inv.Examples = map[string][]string{}
		}
		if len(inv.Examples[kind]) < maxExamples {
			inv.Examples[kind] = append(inv.Examples[kind], fmt.Sprintf(format, a...))
		}
	}
	rows, rowOf := v.rows(), seatRows(v)
	holderOf := map[int]string{}
	counted := map[int]bool{}
	// In the order they were answered: a seat's first hold comes first.
	for _, o := range sortedByAnswer(outcomes) {
		if !o.granted() {
			continue
		}
		inv.Holds++
		inv.Seats += len(o.Seats)
		outside, wrong := false, false
		for _, s := range o.Seats {
			if other, dup := holderOf[s]; dup {
				if !counted[s] {
					inv.SeatsInTwoHolds++
					counted[s] = true
				}
				example(faultTwoHolds, "seat %d is in hold %s and hold %s", s, other, o.Hold)
			} else {
				holderOf[s] = o.Hold
			}
			if s < 1 || s > len(rowOf) {
				outside = true
			} else if category != "" && rows[rowOf[s-1]].Category != category {
				wrong = true
			}
		}
		switch {
		case outside:
			inv.NotInVenue++
			example(faultNotInVenue, "hold %s has seats %v, not all of the venue's 1..%d", o.Hold, o.Seats, len(rowOf))
		case adjacent && !oneRun(o.Seats, rowOf):
			inv.NotAdjacent++
			example(faultNotAdjacent, "hold %s of %d adjacent seats has seats %s", o.Hold, o.Quantity, seatNames(rows, rowOf, o.Seats))
		}
		if wrong {
			inv.WrongCategory++
			example(faultCategory, "hold %s has seats %s outside category %q", o.Hold, seatNames(rows, rowOf, o.Seats), category)
		}
	}
	return inv
}

// seatRows maps each seat of v (seat s at s-1) to the index of its row in
// v.rows().
func seatRows(v venue) []int {
	rowOf := make([]int, 0, v.SeatCount)
	for i, r := range v.rows() {
		for range r.Seats {
			rowOf = append(rowOf, i)
		}
	}
	return rowOf
}

// oneRun reports whether seats (ascending, all of the venue) follow one
// another in one row.
func oneRun(seats []int, rowOf []int) bool {
	for k := 1; k < len(seats); k++ {
		if seats[k] != seats[k-1]+1 || rowOf[seats[k]-1] != rowOf[seats[0]-1] {
			return false
		}
	}
	return true
}

// seatNames shows seats by their labels (B7, 114-C7), as the seat map
// does; rows are the venue's, rowOf as seatRows makes it.
func seatNames(rows []venueRow, rowOf []int, seats []int) string {
	names := make([]string, len(seats))
	for k, s := range seats {
		if s < 1 || s > len(rowOf) {
			names[k] = fmt.Sprint(s)
			continue
		}
		r := rows[rowOf[s-1]]
		names[k] = seatLabel(r, s-r.FirstSeat+1)
	}
	return fmt.Sprint(names)
}

// checkMap compares one target's seat map of v (or the error reading it)
// with the granted holds, and counts its stranded single seats.
func checkMap(target string, v venue, outcomes []holdOutcome, statuses map[int]string, err error) mapCheck {
	c := mapCheck{Target: target, seatMapCount: countSeatMap(statuses, err)}
	if err != nil {
		return c
	}
	granted := map[int]bool{}
	for _, o := range outcomes {
		if o.granted() {
			for _, s := range o.Seats {
				granted[s] = true
			}
		}
	}
	for s := 1; s <= v.SeatCount; s++ {
		st, ok := statuses[s]
		switch {
		case !ok:
			c.Missing++
		case st == "held" && !granted[s]:
			c.HeldNotGranted++
		}
		if granted[s] && st != "held" {
			c.GrantedNotHeld++
		}
	}
	c.StrandedSingles = strandedSingles(v, statuses)
	return c
}

// strandedSingles counts the available seats of v that no party of two
// can have: both neighbours in the row taken, or the row's end (the rows
// of every section; the last seat of a row is never next to the first of
// the next, whichever section they are in).
func strandedSingles(v venue, statuses map[int]string) int {
	free := func(s int) bool { return statuses[s] == "available" }
	n := 0
	for _, r := range v.rows() {
		last := r.FirstSeat + r.Seats - 1
		for s := r.FirstSeat; s <= last; s++ {
			if free(s) && (s == r.FirstSeat || !free(s-1)) && (s == last || !free(s+1)) {
				n++
			}
		}
	}
	return n
}
