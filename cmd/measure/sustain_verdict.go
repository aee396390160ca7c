package main

import (
	"fmt"
	"slices"
)

// window is one window of a sustain run, its figures as printed: bookings
// a second, and PostgreSQL's CPU microseconds per booking, both to a tenth.
type window struct {
	n              int
	perSecond, cpu float64
}

// Targets of a sustain run: no window slower than minWindowShare of the
// median window, and PostgreSQL's CPU per booking in the last minute at
// most maxCPUGrowth times the first minute's.
const (
	minWindowShare = 0.85
	maxCPUGrowth   = 1.15
)

// sustainVerdict judges the full windows of a run, each windowSecs long:
// its report lines, and whether both targets are met. With under two
// minutes of windows it sets the last third against the first third.
func sustainVerdict(windows []window, windowSecs int) (lines []string, pass bool) {
	n := len(windows)
	if n < 3 {
		return []string{"sustain: too few windows for a verdict"}, false
	}
	rates := make([]float64, n)
	for i, w := range windows {
		rates[i] = w.perSecond
	}
	mid := median(rates)
	low := slices.Min(rates)
	at := slices.Index(rates, low) + 1
	span := n / 3
	if n*windowSecs >= 120 {
		span = 60 / windowSecs
	}
	var first, last float64
	for i := range span {
		first += windows[i].cpu
		last += windows[n-span+i].cpu
	}
	first /= float64(span)
	last /= float64(span)
	lines = []string{
		fmt.Sprintf("sustain: %d windows; median %.0f bookings/s; lowest %.0f (window %d) = %.2fx the median (target >= %.2f)",
			n, mid, low, at, low/mid, minWindowShare),
		fmt.Sprintf("sustain: PostgreSQL CPU per booking: first %d s %.1f µs, last %d s %.1f µs = %.2fx (target <= %.2f)",
			span*windowSecs, first, span*windowSecs, last, last/first, maxCPUGrowth),
	}
	pass = low >= minWindowShare*mid && last <= maxCPUGrowth*first
	if pass {
		return append(lines, "sustain: PASS"), true
	}
	return append(lines, "sustain: FAIL"), false
}
