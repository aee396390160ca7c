package main

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The targets of -scenario on-sale (reported, not judged).
const (
	targetJoinP99Millis = 100 // p99 of a join, below
	// targetRateSlack: no 10 s window admits faster than the rate asked
	// by more than this share (the polls see admissions late, and bunch
	// them a little).
	targetRateSlack = 0.1
	// An estimate is good within ±targetEstimateBand of the wait it
	// predicted; targetEstimateShare of them should be.
	targetEstimateBand  = 0.2
	targetEstimateShare = 0.5
	// minEstimateSeconds: estimates shorter than this are not weighed,
	// the polling's granularity (a second at least) being too coarse.
	minEstimateSeconds = 10
	// admissionWindow is the span over which admissions a second are
	// counted.
	admissionWindow = 10 * time.Second
)

// onSaleReport is -scenario on-sale's part of the report.
type onSaleReport struct {
	Sale     onSaleConfig `json:"sale"`
	Schedule int64        `json:"scheduleId"`
	Capacity int          `json:"capacity"`
	OpensAt  time.Time    `json:"opensAt"`
	Users    int          `json:"users"`
	// Joins counts the joins answered 201 (Prequeue of them before the
	// opening), JoinLatency their latency.
	Joins       int     `json:"joins"`
	Prequeue    int     `json:"prequeue"`
	JoinLatency latency `json:"joinLatencyMs"`
	// HoldLatency is the latency of the admitted buyers' holds, every
	// one answered (granted or refused); holdLatencies the histogram it
	// was read from, for on-sales to merge.
	HoldLatency   latency `json:"holdLatencyMs"`
	holdLatencies *hdrhistogram.Histogram
	// ServerErrors counts the 5xx answers of every request.
	ServerErrors int `json:"serverErrors"`
	// Polls counts the GET /queue/{ticket}.
	Polls int `json:"polls"`
	// Admitted counts the tickets seen admitted; TimeToAdmission is from
	// the join's answer (pre-queue: from the opening) to the first poll
	// that saw it.
	Admitted        int              `json:"admitted"`
	TimeToAdmission spread           `json:"timeToAdmissionMs"`
	Windows         []admissionCount `json:"admissionsPer10s"`
	// ServiceWindows are the admissions a second by the queue's own
	// count (onsale_rate.go), free of the polls' delays.
	ServiceWindows []admissionCount `json:"serviceAdmissionsPer10s"`
	// Order is the order of admission against the line's
	// (onsale_order.go).
	Order orderCheck `json:"order"`
	// Once: every user has one ticket of their own, a second join gives
	// it again, and the queue counts as many admissions as were seen.
	Once onceReport `json:"once"`
	// Unadmitted counts the sampled holds without Admission, Refused
	// those answered 403 admission_required.
	Unadmitted int `json:"holdsWithoutAdmission"`
	Refused    int `json:"refusedWithoutAdmission"`
	// SeatsSold sums the confirmed seats; SellOut is the time from the
	// opening to the first not_enough_seats with none available (SoldOut)
	// or, if none came, to the last buyer's end.
	Holds     int      `json:"holds"`
	SeatsSold int      `json:"seatsSold"`
	SoldOut   bool     `json:"soldOut"`
	SellOut   duration `json:"sellOutMs"`
	// Estimates weighs the first waiting estimates of at least
	// minEstimateSeconds against the waits measured.
	Estimates estimateReport `json:"estimates"`
	// Ends counts the buyers by how their sale ended.
	Ends    map[string]int `json:"ends"`
	Wall    duration       `json:"wallMs"`
	SeatMap seatMapCount   `json:"seatMap"`
	// Cleanup says why the queue could not be deleted at the end.
	Cleanup    string   `json:"cleanupError,omitempty"`
	Targets    []target `json:"targets"`
	TargetsMet bool     `json:"targetsMet"`
}

// spread is a few percentiles of durations.
type spread struct {
	P50 duration `json:"p50"`
	P99 duration `json:"p99"`
	Max duration `json:"max"`
}

// admissionCount is the admissions seen in one window, from the opening.
type admissionCount struct {
	From     duration `json:"fromMs"`
	Admitted int      `json:"admitted"`
	PerSec   float64  `json:"perSec"`
	// Partial: the sale ended within the window (by the queue's count:
	// nobody waited at its end).
	Partial bool `json:"partial,omitempty"`
	// HeldBack: maxActive's places were full at the window's start or
	// end (serviceWindows), so it admitted as buyers left.
	HeldBack bool `json:"heldBack,omitempty"`
}

// measuresRate: the window says something of the rate, being neither Partial
// nor HeldBack.
func (w admissionCount) measuresRate() bool { return !w.Partial && !w.HeldBack }

type onceReport struct {
	// SharedTickets counts the tickets given to more than one user;
	// Rejoins the sampled second joins, RejoinedElsewhere those that
	// answered another ticket.
	SharedTickets     int `json:"sharedTickets"`
	Rejoins           int `json:"rejoins"`
	RejoinedElsewhere int `json:"rejoinedElsewhere"`
	// ServiceAdmitted is the queue's count of admissions after the sale
	// (CountsError: why it was not read).
	ServiceAdmitted int64  `json:"serviceAdmitted"`
	CountsError     string `json:"countsError,omitempty"`
}

type estimateReport struct {
	Weighed    int     `json:"weighed"`
	RatioP50   float64 `json:"measuredOverEstimatedP50"`
	WithinBand float64 `json:"withinBandShare"`
}

// summarizeOnSale folds the buyers' runs into a report without a verdict.
func summarizeOnSale(cfg config, runID string, s *sale, runs []buyerRun, wall time.Duration, back readBackOnSale) *report {
	o := cfg.OnSale
	or := &onSaleReport{Sale: o, Schedule: s.venue.ID, Capacity: s.venue.SeatCount, OpensAt: s.opensAt, Users: len(runs),
		Ends: map[string]int{}, Wall: duration(wall)}
	r := &report{RunID: runID, Scenario: cfg.Scenario, Targets: cfg.Targets, Schedules: []int64{s.venue.ID},
		Duration: duration(cfg.Duration), C: cfg.C, Users: cfg.Users, Wall: duration(wall), Responses: map[string]int{}, OnSale: or}
	joins, holds := newLatencyHistogram(), newLatencyHistogram()
	var toAdmission []time.Duration
	var sightings []lineSighting
	var ratios []float64
	owners := map[string]int{}
	var soldOut, lastDone time.Time
	for _, b := range runs {
		for k, n := range b.Responses {
			r.Responses[k] += n
			if statusOf(k) >= http.StatusInternalServerError {
				or.ServerErrors += n
			}
		}
		r.TransportErrs = appendSamples(r.TransportErrs, b.TransportErrs...)
		or.Ends[b.End]++
		or.Polls += b.Polls
		if b.Done.After(lastDone) {
			lastDone = b.Done
		}
		if b.Join.Status == http.StatusCreated && b.Join.Code == "" {
			or.Joins++
			recordLatency(joins, b.Join.Latency)
			if b.Prequeue {
				or.Prequeue++
			}
		}
		if b.Ticket != "" {
			owners[b.Ticket]++
		}
		if b.Sample && b.Ticket != "" {
			or.Once.Rejoins++
			if b.RejoinTicket != b.Ticket {
				or.Once.RejoinedElsewhere++
			}
		}
		if u := b.Unadmitted; u != nil {
			or.Unadmitted++
			if u.Status == http.StatusForbidden && u.Code == codeAdmissionRequired {
				or.Refused++
			}
		}
		for _, h := range b.Holds {
			if h.granted() {
				or.Holds++
			}
			if h.Status != 0 {
				recordLatency(holds, h.Latency)
			}
		}
		or.SeatsSold += b.Seats
		if !b.SoldOut.IsZero() && (soldOut.IsZero() || b.SoldOut.Before(soldOut)) {
			soldOut = b.SoldOut
		}
		sightings = append(sightings, sightingOf(b))
		if b.AdmittedSeen.IsZero() {
			continue
		}
		or.Admitted++
		from := b.Join.At
		if b.Prequeue {
			from = s.opensAt
		}
		toAdmission = append(toAdmission, b.AdmittedSeen.Sub(from))
		if ratio, ok := estimateRatio(b); ok {
			ratios = append(ratios, ratio)
		}
	}
	for _, n := range owners {
		if n > 1 {
			or.Once.SharedTickets++
		}
	}
	for _, n := range r.Responses {
		r.Sent += n
	}
	if wall > 0 {
		r.Throughput = float64(r.Sent) / wall.Seconds()
	}
	// The joins are the sale's requests whose latency matters: the polls
	// are paced by Retry-After, and the holds are best-available's.
	or.JoinLatency = latencyOf(joins)
	r.Latency = or.JoinLatency
	or.HoldLatency, or.holdLatencies = latencyOf(holds), holds
	or.TimeToAdmission = spreadOf(toAdmission)
	or.Windows = admissionWindows(runs, s.opensAt)
	or.ServiceWindows = serviceWindows(back.samples, s.cfg.OnSale.AdmitRate, s.cfg.OnSale.MaxActive)
	or.Order = checkOrder(sightings)
	or.Estimates = estimatesOf(ratios)
	or.SoldOut = !soldOut.IsZero()
	end := lastDone
	if or.SoldOut {
		end = soldOut
	}
	or.SellOut = duration(max(end.Sub(s.opensAt), 0))
	if back.countsErr != nil {
		or.Once.CountsError = back.countsErr.Error()
	}
	or.Once.ServiceAdmitted = back.counts.Admitted
	or.SeatMap = countSeatMap(back.statuses, back.mapErr)
	if back.deleteErr != nil {
		or.Cleanup = back.deleteErr.Error()
	}
	or.Targets, or.TargetsMet = weighOnSale(or)
	return r
}

// sightingOf is what buyer b saw of their place in line.
func sightingOf(b buyerRun) lineSighting {
	t := lineSighting{Prequeue: b.Prequeue, InLine: b.LastNotAdmitted, Admitted: b.AdmittedSeen}
	if w := b.FirstWaiting; w != nil && w.Ticket.Position != nil {
		t.Position, t.Sent, t.At = *w.Ticket.Position, w.SentAt, w.At
	}
	return t
}

// estimateRatio is the wait measured over the wait estimated when b was
// first seen waiting, if that estimate was long enough to weigh. The
// admission came between the last poll that found the ticket in line and
// the first that found it admitted: the middle of that interval is the
// wait's fair measure, the polls being a quarter of the wait apart.
func estimateRatio(b buyerRun) (float64, bool) {
	w := b.FirstWaiting
	if w == nil || w.Ticket.EstimatedWaitSeconds == nil || *w.Ticket.EstimatedWaitSeconds < minEstimateSeconds || b.AdmittedSeen.IsZero() {
		return 0, false
	}
	admitted := b.AdmittedSeen
	if b.LastNotAdmitted.After(w.At) {
		admitted = b.LastNotAdmitted.Add(b.AdmittedSeen.Sub(b.LastNotAdmitted) / 2)
	}
	return admitted.Sub(w.At).Seconds() / *w.Ticket.EstimatedWaitSeconds, true
}

// estimatesOf sums up the ratios.
func estimatesOf(ratios []float64) estimateReport {
	e := estimateReport{Weighed: len(ratios)}
	if len(ratios) == 0 {
		return e
	}
	slices.Sort(ratios)
	e.RatioP50 = ratios[quantileIndex(len(ratios), 0.5)]
	within := 0
	for _, x := range ratios {
		if math.Abs(x-1) <= targetEstimateBand {
			within++
		}
	}
	e.WithinBand = float64(within) / float64(len(ratios))
	return e
}

// admissionWindows counts the admissions seen per admissionWindow from
// the opening (any seen before it, by a clock ahead of the service's, in
// the first). The last window is partial: its rate is over the time from
// its start to the last admission seen (a second at least), not the
// whole window.
func admissionWindows(runs []buyerRun, opensAt time.Time) []admissionCount {
	var counts []admissionCount
	var last time.Duration
	for _, b := range runs {
		if b.AdmittedSeen.IsZero() {
			continue
		}
		since := max(b.AdmittedSeen.Sub(opensAt), 0)
		last = max(last, since)
		k := int(since / admissionWindow)
		for len(counts) <= k {
			counts = append(counts, admissionCount{From: duration(time.Duration(len(counts)) * admissionWindow)})
		}
		counts[k].Admitted++
	}
	for i := range counts {
		span := admissionWindow
		if i == len(counts)-1 {
			counts[i].Partial = true
			span = min(max(last-time.Duration(counts[i].From), time.Second), admissionWindow)
		}
		counts[i].PerSec = float64(counts[i].Admitted) / span.Seconds()
	}
	return counts
}

// busiestWindow is the most admissions a second of a whole window, or of
// the only (partial) one: a short last window would weigh a few
// admissions seen together as a burst.
func busiestWindow(windows []admissionCount) float64 {
	busiest := 0.0
	for i, w := range windows {
		if !w.Partial || i == 0 {
			busiest = max(busiest, w.PerSec)
		}
	}
	return busiest
}

// spreadOf is the percentiles of ds.
func spreadOf(ds []time.Duration) spread {
	if len(ds) == 0 {
		return spread{}
	}
	slices.Sort(ds)
	return spread{P50: duration(ds[quantileIndex(len(ds), 0.5)]), P99: duration(ds[quantileIndex(len(ds), 0.99)]),
		Max: duration(ds[len(ds)-1])}
}

// quantileIndex is the index of the q quantile of n sorted values (the
// nearest rank).
func quantileIndex(n int, q float64) int {
	return min(max(int(math.Ceil(q*float64(n)))-1, 0), n-1)
}

// weighOnSale sets the sale's figures against the targets.
func weighOnSale(or *onSaleReport) ([]target, bool) {
	p99 := float64(or.JoinLatency.P99) / 1e6
	busiest := busiestWindow(or.Windows)
	rate := float64(or.Sale.AdmitRate)
	worst, weighed := worstRateDeviation(or.ServiceWindows, rate)
	e := or.Estimates
	targets := []target{
		{Name: "p99 of a join", Want: fmt.Sprintf("< %d ms", targetJoinP99Millis), Value: p99, Shown: or.JoinLatency.P99.String(),
			Met: or.Joins > 0 && p99 < targetJoinP99Millis},
		{Name: "admissions a second, busiest 10 s window", Want: fmt.Sprintf("<= %.0f (-admit-rate %d + %.0f%%)", rate*(1+targetRateSlack), or.Sale.AdmitRate, 100*targetRateSlack),
			Value: busiest, Shown: fmt.Sprintf("%.1f", busiest), Met: or.Admitted > 0 && busiest <= rate*(1+targetRateSlack)},
		{Name: "admissions a second by the queue's count, worst 10 s window with buyers waiting", Want: fmt.Sprintf("within ±%.0f%% of %d", 100*targetRateBand, or.Sale.AdmitRate),
			Value: worst, Shown: fmt.Sprintf("%.1f%% off (%d windows)", 100*worst, weighed), Met: weighed > 0 && worst <= targetRateBand},
		{Name: fmt.Sprintf("wait measured ÷ estimated, p50 (estimates >= %d s)", minEstimateSeconds),
			Want: fmt.Sprintf("%.1f–%.1f", 1-targetEstimateBand, 1+targetEstimateBand), Value: e.RatioP50,
			Shown: fmt.Sprintf("%.2f (%d weighed)", e.RatioP50, e.Weighed), Met: e.Weighed > 0 && math.Abs(e.RatioP50-1) <= targetEstimateBand},
		{Name: fmt.Sprintf("estimates within ±%.0f%%", 100*targetEstimateBand), Want: fmt.Sprintf(">= %.0f%%", 100*targetEstimateShare),
			Value: e.WithinBand, Shown: fmt.Sprintf("%.0f%%", 100*e.WithinBand), Met: e.Weighed > 0 && e.WithinBand >= targetEstimateShare},
	}
	all := true
	for _, t := range targets {
		all = all && t.Met
	}
	return targets, all
}

// onSaleAllowed are the answers an on-sale expects, by request.
var onSaleAllowed = map[string]bool{
	keyHeld + " (" + opJoin + ")": true, keyOK + " (" + opRejoin + ")": true, keyOK + " (" + opPoll + ")": true,
	"403 " + codeAdmissionRequired + " (" + opUnadmitted + ")": true,
	keyHeld + " (" + opHold + ")":                              true, keyNotEnough + " (" + opHold + ")": true, keyContended + " (" + opHold + ")": true,
	keyOK + " (" + opConfirm + ")": true, "204 (" + opLeave + ")": true,
}

// judgeOnSale passes an on-sale only if it ran to its end and the
// waiting room kept its promises: every user got a ticket of their own
// (and the same one joining again), every one was admitted within
// -duration and in line order, none twice (the queue counts the
// admissions the buyers saw), a hold without Admission was refused, every
// answer was one the sale expects (no 5xx, no transport error), every
// admitted buyer's hold was confirmed and their ticket given up, and the
// seat map holds exactly the seats confirmed. The targets are reported,
// not judged.
func judgeOnSale(r *report, interrupted bool) verdict {
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	or := r.OnSale
	if interrupted {
		fail("run interrupted")
	}
	if or.Joins != or.Users {
		fail("%d of %d users got no new ticket (201) when joining", or.Users-or.Joins, or.Users)
	}
	judgeResponses(r.Responses, func(k string) bool {
		return onSaleAllowed[k] || strings.HasPrefix(k, keyRateLimited+" (") || strings.HasPrefix(k, keyCanceled+" (")
	}, "on-sale", r.TransportErrs, fail)
	if n := or.Ends[endNotAdmitted]; n > 0 {
		fail("%d buyers were not admitted within -duration (%s from the first join)", n, r.Duration)
	}
	for _, end := range []string{endTicketGone, endHoldFailed, endNotLeft} {
		if n := or.Ends[end]; n > 0 {
			fail("%d buyers: %s", n, end)
		}
	}
	if or.Order.Inversions > 0 {
		fail("%d tickets admitted while a ticket ahead of them was still in line (by up to %s beyond the polling's granularity)",
			or.Order.Inversions, or.Order.Lead)
	}
	if or.Once.SharedTickets > 0 {
		fail("%d tickets given to more than one user", or.Once.SharedTickets)
	}
	if or.Once.RejoinedElsewhere > 0 {
		fail("%d of %d second joins answered another ticket than the user's", or.Once.RejoinedElsewhere, or.Once.Rejoins)
	}
	switch {
	case or.Once.CountsError != "":
		fail("reading the queue's counts: %s", or.Once.CountsError)
	case or.Once.ServiceAdmitted != int64(or.Admitted) && or.Ends[endNotAdmitted] == 0:
		fail("the queue counts %d admissions, the buyers saw %d tickets admitted: some admitted twice, or never told", or.Once.ServiceAdmitted, or.Admitted)
	}
	if or.Refused != or.Unadmitted {
		fail("%d of %d holds without Admission were not refused 403 %s", or.Unadmitted-or.Refused, or.Unadmitted, codeAdmissionRequired)
	}
	switch m := or.SeatMap; {
	case m.Error != "":
		fail("seat map after the sale: %s", m.Error)
	case m.Reserved != or.SeatsSold || m.Held != 0:
		fail("seat map after the sale: %d reserved, %d held; want the %d seats confirmed reserved and none held", m.Reserved, m.Held, or.SeatsSold)
	}
	if or.SeatsSold > or.Capacity {
		fail("%d seats sold of %d", or.SeatsSold, or.Capacity)
	}
	if or.Cleanup != "" {
		fail("deleting the queue: %s", or.Cleanup)
	}
	judgeWebhooks(r.Webhooks, fail)
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// writeOnSaleText prints an on-sale report's figures and returns its
// targets.
func writeOnSaleText(p printer, r *report) []target {
	or := r.OnSale
	o := or.Sale
	p("venue:\t%s; schedule %d", o.describe(), or.Schedule)
	maxActive := "no cap"
	if o.MaxActive > 0 {
		maxActive = fmt.Sprintf("at most %d at once", o.MaxActive)
	}
	p("queue:\topens %s, admits %d a second, %s", or.OpensAt.UTC().Format(time.RFC3339Nano), o.AdmitRate, maxActive)
	p("buyers:\t%d users joining over %s, %.0f%% of it before the opening; quantity %s; %d connections; at most %s",
		or.Users, o.JoinWindow, 100*o.PrequeueShare, quantityRange(o.bestConfig), r.C, r.Duration)
	p("joins:\t%d (%d pre-queue); latency p50 %s  p99 %s  max %s", or.Joins, or.Prequeue, or.JoinLatency.P50, or.JoinLatency.P99, or.JoinLatency.Max)
	p("holds:\tlatency p50 %s  p99 %s  max %s", or.HoldLatency.P50, or.HoldLatency.P99, or.HoldLatency.Max)
	p("5xx:\t%d", or.ServerErrors)
	p("polls:\t%d (%.1f per buyer)", or.Polls, float64(or.Polls)/float64(max(or.Users, 1)))
	p("admitted:\t%d; time to admission p50 %s  p99 %s  max %s (pre-queue: from the opening)",
		or.Admitted, or.TimeToAdmission.P50, or.TimeToAdmission.P99, or.TimeToAdmission.Max)
	p("admissions/s:\tper 10 s from the opening, as the polls saw them: %s", windowRates(or.Windows, "partial"))
	p("\tby the queue's count: %s", windowRates(or.ServiceWindows, "nobody left waiting"))
	p("order:\t%d inversions among %d admitted tickets with one seen ahead of them (worst by %s)",
		or.Order.Inversions, or.Order.Compared, or.Order.Lead)
	p("once:\t%d tickets shared, %d of %d second joins answered another ticket; the queue counts %d admissions",
		or.Once.SharedTickets, or.Once.RejoinedElsewhere, or.Once.Rejoins, or.Once.ServiceAdmitted)
	p("without admission:\t%d of %d holds refused 403 %s", or.Refused, or.Unadmitted, codeAdmissionRequired)
	sellOut := "not sold out: every buyer done"
	if or.SoldOut {
		sellOut = "sold out"
	}
	p("sold:\t%d of %d seats in %d holds; %s %s after the opening", or.SeatsSold, or.Capacity, or.Holds, sellOut, or.SellOut)
	e := or.Estimates
	p("estimates:\t%d of %d s or more: measured ÷ estimated p50 %.2f, %.0f%% within ±%.0f%%",
		e.Weighed, minEstimateSeconds, e.RatioP50, 100*e.WithinBand, 100*targetEstimateBand)
	ends := make([]string, 0, len(or.Ends))
	for _, k := range slices.Sorted(maps.Keys(or.Ends)) {
		ends = append(ends, fmt.Sprintf("%s %d", k, or.Ends[k]))
	}
	p("ends:\t%s", strings.Join(ends, ", "))
	if m := or.SeatMap; m.Error != "" {
		p("seat map:\t%s", m.Error)
	} else {
		p("seat map:\t%d reserved, %d held, %d available", m.Reserved, m.Held, m.Available)
	}
	p("responses:\t%d in %s", r.Sent, r.Wall)
	writeResponses(p, r.Responses, 0, r.TransportErrs)
	writeWebhooksText(p, r.Webhooks)
	return or.Targets
}

// windowRates lists the windows' admissions a second, each partial one
// marked with why.
func windowRates(windows []admissionCount, partial string) string {
	parts := make([]string, len(windows))
	for i, win := range windows {
		parts[i] = fmt.Sprintf("%.1f", win.PerSec)
		switch {
		case win.Partial:
			parts[i] += " (" + partial + ")"
		case win.HeldBack:
			parts[i] += " (maxActive full)"
		}
	}
	return strings.Join(parts, ", ")
}
