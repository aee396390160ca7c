package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeJSON prints r as one indented JSON document.
func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeText prints r for a human, verdict last.
func writeText(w io.Writer, r *report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }

	p("targets:\t%s", strings.Join(r.Targets, ", "))
	p("schedule:\t%d (run %s)", r.ScheduleID, r.RunID)
	p("requests:\t%d sent of %d, %d workers, %d seat(s)", r.Sent, r.N, r.C, len(r.Seats))
	p("wall time:\t%s", r.Wall)
	p("throughput:\t%.1f req/s", r.Throughput)
	p("latency:\tp50 %s  p90 %s  p99 %s  max %s", r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.Max)
	p("responses:\t")
	for _, k := range sortedKeys(r.Responses) {
		p("  %s\t%d", k, r.Responses[k])
	}
	for _, e := range r.TransportErrors {
		p("  e.g.\t%s", e)
	}
	p("seats:\t")
	for _, s := range r.PerSeat {
		p("  seat %d\t%d requests, %d × 200, seat map %s", s.Seat, s.Requests, s.OK, s.Map)
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
