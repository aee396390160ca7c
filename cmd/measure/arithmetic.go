package main

import (
	"math"
	"slices"
)

// rotated is targets starting from the (round - 1)th, round counting from
// 1: each round runs them in another order, so that no target always runs
// right after the same one (a traced instance still exporting, a
// contender still vacuuming).
func rotated(round int, targets []string) []string {
	out := make([]string, len(targets))
	for i := range targets {
		out[i] = targets[(i+round-1)%len(targets)]
	}
	return out
}

// median is the middle of values, the lower of the two middle ones when
// their number is even; 0 when there are none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(values))
	return sorted[(len(sorted)-1)/2]
}

// cpuPerRequest is the CPU time of ticks spread over requests, in
// microseconds to a tenth.
func cpuPerRequest(ticks int64, requests int) float64 {
	if requests == 0 {
		return 0
	}
	return math.Round(float64(ticks)/clockTicks*1e6/float64(requests)*10) / 10
}
