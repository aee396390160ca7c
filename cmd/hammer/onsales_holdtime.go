package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The halls' holds over the sale. One p99 over the run says how long the
// worst holds took, not when: in a burst (the opening, a hall selling
// out) or growing all along, the requests coming faster than the machine
// serves them so that each waits behind more than the last.

// holdWindowLength is the span of one window of holdsOverTime.
const holdWindowLength = 10 * time.Second

// holdWindow is the halls' holds sent within one window from the
// opening: how many were answered, and how long they took.
type holdWindow struct {
	From  duration `json:"fromMs"`
	Holds int      `json:"holds"`
	P50   duration `json:"p50Ms"`
	P99   duration `json:"p99Ms"`
}

// holdsOverTime puts every answered hold of the halls (the stadium's left
// out) in the window it was sent in, counted from opensAt.
func holdsOverTime(sales []*sale, runs [][]buyerRun, opensAt time.Time) []holdWindow {
	var hists []*hdrhistogram.Histogram
	for i, s := range sales {
		if s.stadium {
			continue
		}
		for _, b := range runs[i] {
			for _, h := range b.Holds {
				if h.Status == 0 {
					continue
				}
				n := max(int(h.At.Add(-h.Latency).Sub(opensAt)/holdWindowLength), 0)
				for len(hists) <= n {
					hists = append(hists, newLatencyHistogram())
				}
				recordLatency(hists[n], h.Latency)
			}
		}
	}
	windows := make([]holdWindow, len(hists))
	for i, h := range hists {
		l := latencyOf(h)
		windows[i] = holdWindow{From: duration(time.Duration(i) * holdWindowLength), Holds: int(h.TotalCount()), P50: l.P50, P99: l.P99}
	}
	return windows
}

// firstOpening is the earliest opening of the sales.
func firstOpening(sales []*sale) time.Time {
	var first time.Time
	for _, s := range sales {
		if first.IsZero() || s.opensAt.Before(first) {
			first = s.opensAt
		}
	}
	return first
}

// holdWindowsText is the windows on one line: each one's start, its
// holds' p50 and p99, and how many there were.
func holdWindowsText(windows []holdWindow) string {
	parts := make([]string, len(windows))
	for i, w := range windows {
		parts[i] = fmt.Sprintf("%s %s/%s (%d)", time.Duration(w.From), w.P50, w.P99, w.Holds)
	}
	return strings.Join(parts, ", ")
}
