package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// figures is the line a PostgreSQL switchover or failover ends with on
// stdout, `promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2`; a
// figure the line lacks is nil (null in pgfailovers.jsonl).
type figures struct {
	PromotedAfterMs *int64  `json:"promotedAfterMs"`
	RejoinedAfterMs *int64  `json:"rejoinedAfterMs"`
	Leader          *string `json:"leader"`
}

// parseFigures reads the key=value words of out; a later word wins over
// an earlier one.
func parseFigures(out string) figures {
	var f figures
	for _, word := range strings.Fields(out) {
		key, value, ok := strings.Cut(word, "=")
		if !ok {
			continue
		}
		switch key {
		case "promotedAfterMs":
			f.PromotedAfterMs = millis(value)
		case "rejoinedAfterMs":
			f.RejoinedAfterMs = millis(value)
		case "leader":
			f.Leader = &value
		}
	}
	return f
}

// millis is a count of milliseconds, or nil when s is none.
func millis(s string) *int64 {
	n, err := strconv.ParseUint(s, 10, 63)
	if err != nil {
		return nil
	}
	ms := int64(n)
	return &ms
}

// orUnknown is n, or ? when there is none.
func orUnknown[T int | int64](n *T) string {
	if n == nil {
		return "?"
	}
	return strconv.FormatInt(int64(*n), 10)
}

// number prints f as briefly as it reads back: 6612.5, 7 (not 7.000).
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// verdictText is PASS, or FAIL and the reasons.
func verdictText(pass bool, reasons []string) string {
	if pass {
		return "PASS"
	}
	return "FAIL: " + strings.Join(reasons, "; ")
}

// during says what the cluster went through while the hammer ran, for a
// run's line: CHANGE took seconds and printed f.
func during(change string, took int, f figures) string {
	leader := "?"
	if f.Leader != nil {
		leader = *f.Leader
	}
	switch change {
	case "roll":
		return fmt.Sprintf("3 instances restarted in %d s", took)
	case "failover":
		return fmt.Sprintf("the Sentinels failed over in %d s", took)
	case "pg-switchover":
		return fmt.Sprintf("PostgreSQL switched over to %s (leading %s ms after the request; the old leader its synchronous standby %s ms later)",
			leader, orUnknown(f.PromotedAfterMs), orUnknown(f.RejoinedAfterMs))
	default:
		return fmt.Sprintf("the PostgreSQL leader was SIGKILLed (%s leading %s ms after the kill; the killed node, restarted, its synchronous standby %s ms later)",
			leader, orUnknown(f.PromotedAfterMs), orUnknown(f.RejoinedAfterMs))
	}
}

// runLine is a rolling drill's line for one hammer run (what, as "roll
// 2"), while the cluster went through what during says; withGap adds the
// 503 unavailable answers and the longest time without a booking (a
// PostgreSQL failover's).
func runLine(what, during string, r *hammerReport, withGap bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d requests in %d ms (%d req/s) while %s; 5xx %d", what, r.Sent,
		int64(math.Floor(r.WallMs)), int64(math.Floor(r.ThroughputPerSec)), during, r.serverErrors())
	if withGap {
		gap := "?"
		if r.LongestGapMs != nil {
			gap = number(*r.LongestGapMs)
		}
		fmt.Fprintf(&b, " (503 unavailable %d), longest gap without a booking %s ms", r.Responses[unavailableStatus], gap)
	}
	w := r.Watch
	if w == nil {
		w = &watchReport{}
	}
	eventP99 := "?"
	if w.DelayMs.P99 != nil {
		eventP99 = number(*w.DelayMs.P99)
	}
	fmt.Fprintf(&b, ", transport errors %d, events %d of %d bookings, missing %d, streams reopened %d, event p99 %s ms; p99 %s ms; verdict %s",
		r.transportErrors(), w.Matched, w.Booked, len(w.Missing), w.Resumed, eventP99, number(r.LatencyMs.P99),
		verdictText(r.Verdict.Pass, r.Verdict.Reasons))
	return b.String()
}

// tableRow is one row of make pg-failovers' table.
func tableRow(cells ...string) string {
	return fmt.Sprintf("%3s  %15s  %12s  %6s  %10s  %9s  %8s  %4s  %11s  %14s  %s", toAny(cells)...)
}

func toAny(cells []string) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		out[i] = c
	}
	return out
}

// tableHeader names the columns of make pg-failovers' table.
var tableHeader = tableRow("run", "promotedAfterMs", "longestGapMs", "503s", "other 5xx", "transport", "bookings",
	"lost", "seats twice", "events missing", "verdict")

// row is r's row of the table.
func (r runRow) row() string {
	verdict := "FAIL"
	if r.Pass {
		verdict = "PASS"
	}
	run, promoted := strconv.Itoa(r.Run), orUnknown(r.PromotedAfterMs)
	c := r.counts
	if c == nil {
		return tableRow(run, promoted, "?", "?", "?", "?", "?", "?", "?", "?", verdict)
	}
	return tableRow(run, promoted, strconv.FormatInt(c.LongestGapMs, 10), strconv.Itoa(c.Unavailable),
		strconv.Itoa(c.Other5xx), strconv.Itoa(c.TransportErrors), strconv.Itoa(c.Bookings), orUnknown(c.Lost),
		strconv.Itoa(c.SeatsTwice), strconv.Itoa(c.EventsMissing), verdict)
}

// summary is make pg-failovers' closing lines: the median and worst
// longest time without a booking over the runs with a report, the median
// and worst promotion, and the totals behind the verdicts.
func summary(rows []runRow, runs int) string {
	var gaps, promoted []float64
	var t counts // the totals; Lost stays nil
	lost, passed := 0, 0
	for _, r := range rows {
		if r.PromotedAfterMs != nil {
			promoted = append(promoted, float64(*r.PromotedAfterMs))
		}
		if r.Pass {
			passed++
		}
		c := r.counts
		if c == nil {
			continue
		}
		gaps = append(gaps, float64(c.LongestGapMs))
		t.Unavailable += c.Unavailable
		t.Other5xx += c.Other5xx
		t.TransportErrors += c.TransportErrors
		t.Bookings += c.Bookings
		t.SeatsTwice += c.SeatsTwice
		t.EventsMissing += c.EventsMissing
		if c.Lost != nil {
			lost += *c.Lost
		}
	}
	return fmt.Sprintf("longestGapMs: median %s, worst %s over %d runs; promotedAfterMs: median %s, worst %s\n"+
		"totals: %d 503s, %d other 5xx, %d transport errors, %d bookings, %d lost, %d seats twice, %d events missing; %d of %d runs passed",
		orNull(median(gaps)), orNull(worst(gaps)), len(gaps), orNull(median(promoted)), orNull(worst(promoted)),
		t.Unavailable, t.Other5xx, t.TransportErrors, t.Bookings, lost, t.SeatsTwice, t.EventsMissing, passed, runs)
}

// orNull prints a figure, or null when there is none (no runs to take it
// from).
func orNull(f float64, ok bool) string {
	if !ok {
		return "null"
	}
	return number(f)
}

// median is the middle value, or the mean of the two middle ones; none
// of no values.
func median(values []float64) (float64, bool) {
	if len(values) == 0 {
		return 0, false
	}
	s := slices.Sorted(slices.Values(values))
	if n := len(s); n%2 == 1 {
		return s[n/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// worst is the largest value; none of no values.
func worst(values []float64) (float64, bool) {
	if len(values) == 0 {
		return 0, false
	}
	return slices.Max(values), true
}
