package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The targets of -scenario best-available, for a run at 64 connections on
// a 2,000-seat layout of 40 rows × 50.
const (
	targetSoldShare     = 0.98 // seats sold when requests stop succeeding, of capacity
	targetStrandedShare = 0.01 // stranded single seats, of capacity
	targetHoldsRatio    = 0.5  // best-available holds/s ÷ explicit holds/s
	targetAttempts      = 1.5  // mean attempts per successful hold
	targetHoldP99Millis = 100  // p99 of a best-available 201, below
)

// bestReport is -scenario best-available's part of the report.
type bestReport struct {
	Venue      bestConfig `json:"venue"`
	Capacity   int        `json:"capacity"`
	PhaseLimit duration   `json:"phaseLimitMs"`
	// Best is the best-available phase, Explicit the explicit-seat phase
	// on a venue of its own.
	Best     phaseReport `json:"best"`
	Explicit phaseReport `json:"explicit"`
	// HoldsRatio is Best.HoldsPerSec ÷ Explicit.HoldsPerSec.
	HoldsRatio float64 `json:"holdsPerSecRatio"`
	// SeatsSold counts the seats of the best-available 201s, as a share
	// of Capacity in SoldShare.
	SeatsSold int     `json:"seatsSold"`
	SoldShare float64 `json:"seatsSoldShare"`
	// FreeSeats and StrandedSingles are read on the best-available
	// venue's seat map (first target) after its phase.
	FreeSeats       int     `json:"freeSeats"`
	StrandedSingles int     `json:"strandedSingles"`
	StrandedShare   float64 `json:"strandedShare"`
	// PostgresDatabase is the database whose rows read each phase's
	// Postgres counts; PostgresNote says why there are none.
	PostgresDatabase string `json:"postgresDatabase,omitempty"`
	PostgresNote     string `json:"postgresNote,omitempty"`
	// SeatMapBytes is the best-available venue's seat map on the wire,
	// compact and full, gzip-compressed, at the start and the end.
	SeatMapBytes *wireReport `json:"seatMapBytes,omitempty"`
	Targets      []target    `json:"targets"`
	TargetsMet   bool        `json:"targetsMet"`
}

// phaseReport is one phase of holds.
type phaseReport struct {
	Schedule  int64    `json:"scheduleId"`
	StoppedBy string   `json:"stoppedBy"`
	Requests  int      `json:"requests"`
	Holds     int      `json:"holds"`
	SeatsHeld int      `json:"seatsHeld"`
	Wall      duration `json:"wallMs"`
	// Selling is the time from the start to the last 201; HoldsPerSec is
	// Holds over it, RequestsPerSec Requests over Wall.
	Selling        duration       `json:"sellingMs"`
	HoldsPerSec    float64        `json:"holdsPerSec"`
	RequestsPerSec float64        `json:"requestsPerSec"`
	Responses      map[string]int `json:"responses"`
	// Latency is of every answer, HoldLatency of the 201s.
	Latency       latency  `json:"latencyMs"`
	HoldLatency   latency  `json:"holdLatencyMs"`
	TransportErrs []string `json:"transportErrorSamples,omitempty"`
	// Attempts (best available) is Hold-Attempts over the 201s.
	Attempts *attemptsReport `json:"attempts,omitempty"`
	// ByQuantity counts requests and answers by the quantity asked.
	ByQuantity map[int]*quantityCounts `json:"byQuantity,omitempty"`
	SoldOut    *soldOutProbe           `json:"soldOutChecks,omitempty"`
	// Postgres is what PostgreSQL read during the phase (-database-url).
	Postgres  *pgRows         `json:"postgres,omitempty"`
	Invariant invariantReport `json:"invariant"`
}

// attemptsReport is how many choices the service tried per 201.
type attemptsReport struct {
	Mean float64 `json:"mean"`
	Max  int     `json:"max"`
	// Counts is how many 201s took each number of attempts.
	Counts map[int]int `json:"counts"`
}

type quantityCounts struct {
	Requests  int `json:"requests"`
	Holds     int `json:"holds"`
	NotEnough int `json:"notEnoughSeats"`
	Contended int `json:"seatsContended"`
	// FirstRefusal is the first not_enough_seats of the quantity, in the
	// order of the answers: how full the venue was then.
	FirstRefusal *refusal `json:"firstRefusal,omitempty"`
}

// refusal is one not_enough_seats: the seats sold by the 201s answered
// before it, and the free seats it said there were.
type refusal struct {
	SeatsSold int `json:"seatsSold"`
	Available int `json:"available"`
}

// target is one of the targets against this run's figure.
type target struct {
	Name  string  `json:"name"`
	Want  string  `json:"want"`
	Value float64 `json:"value"`
	Shown string  `json:"shown"`
	Met   bool    `json:"met"`
}

// summarizeBest folds both phases and their checks into a report without
// a verdict. The report's common figures (sent, wall, throughput,
// responses, latency) are the best-available phase's.
func summarizeBest(cfg config, runID string, runs [2]phaseRun, checks [2]phaseCheck) *report {
	b := cfg.Best
	best, explicit := phaseOf(runs[0], checks[0], true), phaseOf(runs[1], checks[1], false)
	r := &report{
		RunID: runID, Scenario: cfg.Scenario, Targets: cfg.Targets, Schedules: []int64{runs[0].venue.ID, runs[1].venue.ID},
		Duration: duration(cfg.Duration), C: cfg.C, Users: cfg.Users, SeatMapChecked: true,
		Sent: best.Requests, Wall: best.Wall, Throughput: best.RequestsPerSec, Responses: best.Responses, Latency: best.Latency,
	}
	r.TransportErrs = appendSamples(nil, slices.Concat(best.TransportErrs, explicit.TransportErrs)...)
	br := &bestReport{Venue: b, Capacity: b.capacity(), PhaseLimit: duration(cfg.Duration), Best: best, Explicit: explicit,
		SeatsSold: best.SeatsHeld}
	if explicit.HoldsPerSec > 0 {
		br.HoldsRatio = best.HoldsPerSec / explicit.HoldsPerSec
	}
	br.SoldShare = float64(br.SeatsSold) / float64(br.Capacity)
	if maps := best.Invariant.Maps; len(maps) > 0 && maps[0].Error == "" {
		br.FreeSeats, br.StrandedSingles = maps[0].Available, maps[0].StrandedSingles
		br.StrandedShare = float64(br.StrandedSingles) / float64(br.Capacity)
	}
	br.Targets, br.TargetsMet = weigh(br, cfg.C)
	r.Best = br
	return r
}

// phaseOf summarizes one phase.
func phaseOf(run phaseRun, check phaseCheck, best bool) phaseReport {
	p := phaseReport{Schedule: run.venue.ID, StoppedBy: run.stoppedBy, Wall: duration(run.wall), Selling: duration(run.selling),
		Responses: map[string]int{}, Invariant: check.Invariant}
	if run.all == nil {
		p.StoppedBy = "not run"
		return p
	}
	p.Latency, p.HoldLatency = latencyOf(run.all), latencyOf(run.held)
	if best {
		p.Attempts = &attemptsReport{Counts: map[int]int{}}
		p.ByQuantity = map[int]*quantityCounts{}
		probe := run.probe
		p.SoldOut = &probe
	}
	attempts, sold := 0, 0
	for _, o := range sortedByAnswer(run.outcomes) {
		k := o.key()
		p.Responses[k]++
		p.Requests++
		if k == keyTransportError {
			p.TransportErrs = appendSamples(p.TransportErrs, o.Err)
		}
		if o.granted() {
			p.Holds++
			p.SeatsHeld += len(o.Seats)
			sold += len(o.Seats)
		}
		if !best {
			continue
		}
		q := p.ByQuantity[o.Quantity]
		if q == nil {
			q = &quantityCounts{}
			p.ByQuantity[o.Quantity] = q
		}
		q.Requests++
		switch k {
		case keyHeld:
			q.Holds++
			attempts += o.Attempts
			p.Attempts.Counts[o.Attempts]++
			p.Attempts.Max = max(p.Attempts.Max, o.Attempts)
		case keyNotEnough:
			q.NotEnough++
			if q.FirstRefusal == nil {
				q.FirstRefusal = &refusal{SeatsSold: sold, Available: o.Available}
			}
		case keyContended:
			q.Contended++
		}
	}
	if best && p.Responses[keyHeld] > 0 {
		p.Attempts.Mean = float64(attempts) / float64(p.Responses[keyHeld])
	}
	if run.selling > 0 {
		p.HoldsPerSec = float64(p.Holds) / run.selling.Seconds()
	}
	if run.wall > 0 {
		p.RequestsPerSec = float64(p.Requests) / run.wall.Seconds()
	}
	return p
}

// sortedByAnswer orders outcomes by when their answers arrived.
func sortedByAnswer(outcomes []holdOutcome) []holdOutcome {
	out := slices.Clone(outcomes)
	slices.SortStableFunc(out, func(a, b holdOutcome) int { return a.At.Compare(b.At) })
	return out
}

// weigh sets the run's figures against the targets.
func weigh(br *bestReport, connections int) ([]target, bool) {
	held := br.Best.Holds > 0
	p99 := float64(br.Best.HoldLatency.P99) / 1e6
	attempts := 0.0
	if br.Best.Attempts != nil {
		attempts = br.Best.Attempts.Mean
	}
	targets := []target{
		{Name: "seats sold when requests stop succeeding", Want: fmt.Sprintf(">= %.0f%% of capacity", 100*targetSoldShare),
			Value: br.SoldShare, Shown: fmt.Sprintf("%.1f%% (%d of %d)", 100*br.SoldShare, br.SeatsSold, br.Capacity),
			Met: br.SoldShare >= targetSoldShare && br.Best.StoppedBy == stopSoldOut},
		{Name: "stranded single seats", Want: fmt.Sprintf("<= %.0f%% of capacity", 100*targetStrandedShare),
			Value: br.StrandedShare, Shown: fmt.Sprintf("%.2f%% (%d)", 100*br.StrandedShare, br.StrandedSingles),
			Met: br.StrandedShare <= targetStrandedShare && br.Best.StoppedBy == stopSoldOut && len(br.Best.Invariant.Maps) > 0},
		{Name: "best-available holds/s ÷ explicit holds/s", Want: fmt.Sprintf(">= %.1f", targetHoldsRatio),
			Value: br.HoldsRatio, Shown: fmt.Sprintf("%.2f (%.0f/s ÷ %.0f/s)", br.HoldsRatio, br.Best.HoldsPerSec, br.Explicit.HoldsPerSec),
			Met: br.HoldsRatio >= targetHoldsRatio},
		{Name: fmt.Sprintf("attempts per successful hold (%d connections)", connections), Want: fmt.Sprintf("<= %.1f", targetAttempts),
			Value: attempts, Shown: fmt.Sprintf("%.3f", attempts), Met: held && attempts <= targetAttempts},
		{Name: "p99 of a best-available hold", Want: fmt.Sprintf("< %d ms", targetHoldP99Millis),
			Value: p99, Shown: br.Best.HoldLatency.P99.String(), Met: held && p99 < targetHoldP99Millis},
	}
	all := true
	for _, t := range targets {
		all = all && t.Met
	}
	return targets, all
}

// judgeBest passes a best-available run only if both phases ran to their
// end (sold out; every block sent), every answer was one the phase allows
// (201; and for best available 409 not_enough_seats or seats_contended;
// 429 rate_limited in either), every 201's body was a hold as asked, and
// the invariant held: no seat in two holds, every best-available hold
// consecutive in one row when adjacent seats were asked (of the category
// asked), and every target's seat map holds exactly the seats granted.
// The targets are reported, not judged.
func judgeBest(r *report) verdict {
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	b := r.Best
	for _, ph := range []struct {
		name, what string
		p          phaseReport
		want       string
		ok         func(key string) bool
	}{
		{"best-available phase", "best-available holds", b.Best, stopSoldOut, func(k string) bool {
			return k == keyHeld || k == keyNotEnough || k == keyContended || k == keyRateLimited
		}},
		{"explicit phase", "explicit-seat holds", b.Explicit, stopAllSent, func(k string) bool { return k == keyHeld || k == keyRateLimited }},
	} {
		p := ph.p
		switch p.StoppedBy {
		case ph.want:
		case stopInterrupted:
			fail("run interrupted: the %s did not end", ph.name)
		case "not run":
			fail("%s: not run", ph.name)
		default:
			fail("%s: ended by the %s, not %s (%d of %d seats held)", ph.name, p.StoppedBy, ph.want, p.SeatsHeld, b.Capacity)
		}
		prefixed := func(format string, a ...any) { fail(ph.name+": "+format, a...) }
		judgeResponses(p.Responses, func(k string) bool { return ph.ok(k) || k == keyCanceled }, ph.what, p.TransportErrs, prefixed)
		if n := p.Responses[keyTooManyHolds]; n > 0 {
			fail("%s: %d answers too_many_holds: give the run more -users (every user keeps its holds to the end)", ph.name, n)
		}
		if p.SoldOut != nil && len(p.SoldOut.Errors) > 0 {
			fail("%s: reading the seat map to see if it was sold out: %s", ph.name, p.SoldOut.Errors[0])
		}
		judgeInvariant(ph.name, p.Invariant, p.StoppedBy == "not run", fail)
	}
	judgeWatch(r.Watch, func(format string, a ...any) { fail("best-available phase: "+format, a...) })
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// judgeInvariant fails what a phase's check found broken.
func judgeInvariant(name string, inv invariantReport, notRun bool, fail func(string, ...any)) {
	eg := func(kind string) string {
		if len(inv.Examples[kind]) == 0 {
			return ""
		}
		return " (e.g. " + inv.Examples[kind][0] + ")"
	}
	switch {
	case notRun:
		return
	case inv.Error != "":
		fail("%s: layout not read back: %s", name, inv.Error)
		return
	case len(inv.Maps) == 0:
		fail("%s: seat map was not read back", name)
	}
	if inv.SeatsInTwoHolds > 0 {
		fail("%s: %d seats in two granted holds%s", name, inv.SeatsInTwoHolds, eg(faultTwoHolds))
	}
	if inv.NotInVenue > 0 {
		fail("%s: %d holds with seats the venue does not have%s", name, inv.NotInVenue, eg(faultNotInVenue))
	}
	if inv.NotAdjacent > 0 {
		fail("%s: %d holds not consecutive in one row though adjacent seats were asked%s", name, inv.NotAdjacent, eg(faultNotAdjacent))
	}
	if inv.WrongCategory > 0 {
		fail("%s: %d holds with seats of another category than asked%s", name, inv.WrongCategory, eg(faultCategory))
	}
	for _, m := range inv.Maps {
		switch {
		case m.Error != "":
			fail("%s: seat map via %s: %s", name, m.Target, m.Error)
		case m.HeldNotGranted > 0 || m.GrantedNotHeld > 0 || m.Missing > 0 || m.Reserved > 0:
			fail("%s: seat map via %s disagrees with the holds granted: %d seats held that no 201 granted, %d granted seats not held, %d reserved, %d missing",
				name, m.Target, m.HeldNotGranted, m.GrantedNotHeld, m.Reserved, m.Missing)
		}
	}
}

// writeBestText prints a best-available report's figures and returns its
// targets.
func writeBestText(p printer, r *report) []target {
	b := r.Best
	v := b.Venue
	p("venue:\t%s; schedules %d (best available), %d (explicit seats)", v.describe(), b.Best.Schedule, b.Explicit.Schedule)
	adj := "adjacent"
	if !v.Adjacent {
		adj = "not adjacent"
	}
	p("requests:\tquantity %s, %s, seed %d; %d connections, %d users a phase; each phase at most %s",
		quantityRange(v), adj, v.Seed, r.C, r.Users, b.PhaseLimit)
	for _, phase := range []struct {
		name string
		p    phaseReport
	}{{"best available", b.Best}, {"explicit seats", b.Explicit}} {
		ph := phase.p
		p("%s:\t%d requests in %s (%.0f/s), ended by: %s", phase.name, ph.Requests, ph.Wall, ph.RequestsPerSec, ph.StoppedBy)
		p("  holds:\t%d holding %d seats in %s: %.1f holds/s", ph.Holds, ph.SeatsHeld, ph.Selling, ph.HoldsPerSec)
		p("  201 latency:\t%s", ph.HoldLatency)
		p("  all latency:\t%s", ph.Latency)
		if a := ph.Attempts; a != nil {
			p("  attempts:\tmean %.3f, max %d per 201 (%s)", a.Mean, a.Max, countsLine(a.Counts, "×"))
		}
		writeResponses(p, ph.Responses, max(ph.Requests, 1), ph.TransportErrs)
		for _, q := range slices.Sorted(maps.Keys(ph.ByQuantity)) {
			c := ph.ByQuantity[q]
			first := ""
			if f := c.FirstRefusal; f != nil {
				first = fmt.Sprintf(", first refused with %d seats sold (%d available)", f.SeatsSold, f.Available)
			}
			p("  quantity %d:\t%d asked, %d held, %d not enough seats, %d contended%s", q, c.Requests, c.Holds, c.NotEnough, c.Contended, first)
		}
		if pg := ph.Postgres; pg != nil {
			probes := ""
			if ph.SoldOut != nil && ph.SoldOut.Checks > 0 {
				probes = fmt.Sprintf("; the %d seat-map reads of the sold-out check included", ph.SoldOut.Checks)
			}
			p("  PostgreSQL:\t%d rows read (tup_returned + tup_fetched of database %s): %.1f per hold%s",
				pg.RowsRead, b.PostgresDatabase, pg.RowsPerHold, probes)
		}
		if s := ph.SoldOut; s != nil {
			p("  sold out:\t%d seat-map reads after a refusal of %d, %d found room left", s.Checks, v.MinQuantity, s.RoomSeen)
		}
		inv := ph.Invariant
		p("  invariant:\t%d holds of %d seats: %d seats in two holds, %d not adjacent, %d of another category, %d not of the venue",
			inv.Holds, inv.Seats, inv.SeatsInTwoHolds, inv.NotAdjacent, inv.WrongCategory, inv.NotInVenue)
		if inv.Error != "" {
			p("  layout:\t%s", inv.Error)
		}
		for _, m := range inv.Maps {
			if m.Error != "" {
				p("  seat map:\t%s: %s", m.Target, m.Error)
				continue
			}
			p("  seat map:\t%s: %d held, %d available, %d reserved; %d held not granted, %d granted not held, %d missing",
				m.Target, m.Held, m.Available, m.Reserved, m.HeldNotGranted, m.GrantedNotHeld, m.Missing)
		}
		for _, kind := range []string{faultTwoHolds, faultNotAdjacent, faultCategory, faultNotInVenue} {
			for _, e := range inv.Examples[kind] {
				p("  e.g.\t%s", e)
			}
		}
	}
	p("sold:\t%d of %d seats (%.1f%%); %d free, %d stranded single seats (%.2f%%)",
		b.SeatsSold, b.Capacity, 100*b.SoldShare, b.FreeSeats, b.StrandedSingles, 100*b.StrandedShare)
	p("holds/s:\tbest available ÷ explicit seats = %.2f", b.HoldsRatio)
	if b.PostgresNote != "" {
		p("PostgreSQL:\t%s", b.PostgresNote)
	}
	if w := b.SeatMapBytes; w != nil {
		for _, at := range []struct {
			name  string
			sizes []wireSize
		}{{"start", w.Start}, {"end", w.End}} {
			if len(at.sizes) == 0 {
				continue
			}
			parts := make([]string, len(at.sizes))
			for i, size := range at.sizes {
				parts[i] = size.String()
			}
			p("seat map, %s:\t%s (gzip asked; through %s)", at.name, strings.Join(parts, "; "), r.Targets[0])
		}
	}
	writeWatchText(p, r.Watch)
	return b.Targets
}

func quantityRange(b bestConfig) string {
	if b.MinQuantity == b.MaxQuantity {
		return strconv.Itoa(b.MinQuantity)
	}
	return fmt.Sprintf("%d–%d", b.MinQuantity, b.MaxQuantity)
}

// countsLine lists counts by key, in key order: "1×560, 2×10".
func countsLine(counts map[int]int, sep string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d%s%d", k, sep, counts[k]))
	}
	return strings.Join(parts, ", ")
}
