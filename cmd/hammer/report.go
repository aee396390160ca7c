package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// maxSeatLines is how many seats the text report lists one by one.
const maxSeatLines = 20

// writeJSON prints r as one indented JSON document.
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// printer prints one line of a text report, its cells separated by tabs.
type printer func(format string, a ...any)

// writeText prints r for a human: what was run, the scenario's figures
// and targets, the verdict last.
func writeText(w io.Writer, r *report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(tw, format+"\n", a...) }
	p("scenario:\t%s (run %s)", r.Scenario, r.RunID)
	p("targets:\t%s", strings.Join(r.Targets, ", "))
	var targets []target
	switch {
	case r.Best != nil:
		targets = writeBestText(p, r)
	case r.SeatMap != nil:
		targets = writeSeatMapText(p, r)
	case r.OnSale != nil:
		targets = writeOnSaleText(p, r)
	case r.OnSales != nil:
		targets = writeOnSalesText(p, r)
	case r.Platform != nil:
		targets = writePlatformText(p, r)
	default:
		writeBookingText(p, r)
	}
	if len(targets) > 0 {
		// The targets are a table of their own, aligned apart from the
		// rest.
		judged := "(reported, not judged)"
		if r.targetsJudged {
			judged = "(judged: the verdict fails any not met)"
		}
		p("targets:\t%s", judged)
		if err := tw.Flush(); err != nil {
			return err
		}
		tt := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range targets {
			met := "met"
			if !t.Met {
				met = "NOT MET"
			}
			_, _ = fmt.Fprintf(tt, "  %s\t%s\t%s\t%s\n", t.Name, t.Want, t.Shown, met)
		}
		if err := tt.Flush(); err != nil {
			return err
		}
	}
	if o := r.OtherWebhooks; o != nil {
		n := strconv.Itoa(o.Enabled)
		if o.More {
			n = "at least " + n
		}
		p("other webhooks:\t%s enabled before this run, not the hammer's: the service delivers to them (and works through any backlog) on the machine measured", n)
	}
	if r.Verdict.Pass {
		p("verdict:\tPASS")
	} else {
		p("verdict:\tFAIL")
		for _, reason := range r.Verdict.Reasons {
			p("  -\t%s", reason)
		}
	}
	return tw.Flush()
}

// writeBookingText prints the figures of hot-seat, fresh-seats and
// contended.
func writeBookingText(p printer, r *report) {
	p("schedule ids:\t%s", joinIDs(r.Schedules))
	planned := fmt.Sprintf("of %d", r.N)
	if r.N == 0 {
		planned = "in " + r.Duration.String()
	}
	p("requests:\t%d sent %s, %d workers, %d users, %d seat(s)", r.Sent, planned, r.C, r.Users, r.Seats.Hammered)
	p("wall time:\t%s", r.Wall)
	p("throughput:\t%.1f req/s", r.Throughput)
	p("latency:\t%s", r.Latency)
	p("responses:\t")
	writeResponses(p, r.Responses, max(r.Sent, 1), r.TransportErrs)
	if r.AllowUnavailable {
		p("unavailable:\t%d bookings answered 503 unavailable, allowed (-allow-unavailable)", r.Unavailable)
	}
	if r.LongestGap > 0 {
		p("longest gap:\t%s without a 200, from %s to %s into the run", r.LongestGap,
			duration(r.gapFrom), duration(r.gapTo))
	}
	p("seats:\t%d won once, %d not won, %d won more than once", r.Seats.WonOnce, r.Seats.NotWon, r.Seats.WonTwice)
	if len(r.allSeats) <= maxSeatLines {
		for _, s := range r.allSeats {
			p("  seat %d/%d\t%d requests, %d × 200, seat map %s", s.Schedule, s.Seat, s.Requests, s.OK, s.Map)
		}
	}
	if !r.SeatMapChecked {
		p("seat map:\tnot checked (-verify=false): one 200 per seat is judged from the answers alone")
	}
	if a := r.Acknowledged; a != nil {
		p("read back:\t%d of %d bookings answered 200 found by their ids, %d lost, %d not read", a.Found, a.Checked, a.Lost, a.Unchecked)
	}
	writeWatchText(p, r.Watch)
	writeWebhooksText(p, r.Webhooks)
}

// writeResponses prints a status histogram, each count with its share of
// total (none when total is 0), and the samples of its transport errors.
func writeResponses(p printer, responses map[string]int, total int, samples []string) {
	for _, k := range sortedKeys(responses) {
		if total > 0 {
			p("  %s\t%d (%.1f%%)", k, responses[k], 100*float64(responses[k])/float64(total))
		} else {
			p("  %s\t%d", k, responses[k])
		}
	}
	for _, e := range samples {
		p("  e.g.\t%s", e)
	}
}

// writeWatchText prints what -watch found, if anything, as lines of p.
func writeWatchText(p printer, wr *watchReport) {
	if wr == nil {
		return
	}
	what, answer := "bookings", "200"
	if wr.Status == "held" {
		what, answer = "held seats", "201"
	}
	p("live map:\t%s: %d of %d %s seen as events, %d missing, %d before their %s", wr.Target, wr.Matched, wr.Booked, what, len(wr.Missing), wr.Early, answer)
	p("  %s → event:\t%s", answer, wr.Delay)
	snapshot := "none read"
	if wr.SnapshotForm != "" {
		snapshot = fmt.Sprintf("%s form, %d bytes", wr.SnapshotForm, wr.SnapshotBytes)
	}
	p("  snapshot:\tasked %s; first one %s", wr.Form, snapshot)
	if wr.Streams > 0 {
		p("  more clients:\t%d reading-only streams, %d ended early", wr.Streams, wr.Dropped)
	}
	if wr.Resumed > 0 {
		p("  resumed:\t%d times the server ended the stream and it was reopened with Last-Event-ID", wr.Resumed)
	}
}

// joinIDs lists ids, eliding the middle of a long list.
func joinIDs(ids []int64) string {
	if len(ids) > 5 {
		return fmt.Sprintf("%d, %d, …, %d (%d in all)", ids[0], ids[1], ids[len(ids)-1], len(ids))
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}
