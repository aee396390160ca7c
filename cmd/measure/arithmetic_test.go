package main

import (
	"slices"
	"strings"
	"testing"
)

func TestBenchmarkName(t *testing.T) {
	for scenario, want := range map[string]string{
		"hot-seat":    "BenchmarkHotSeat",
		"fresh-seats": "BenchmarkFreshSeats",
		"contended":   "BenchmarkContended",
		"fresh-new":   "BenchmarkFreshNew",
	} {
		if got := benchmarkName(scenario); got != want {
			t.Errorf("benchmarkName(%q) = %q, want %q", scenario, got, want)
		}
	}
}

func TestRotated(t *testing.T) {
	targets := []string{"a", "b", "c"}
	for round, want := range map[int]string{1: "a b c", 2: "b c a", 3: "c a b", 4: "a b c"} {
		if got := strings.Join(rotated(round, targets), " "); got != want {
			t.Errorf("round %d: %q, want %q", round, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		values []float64
		want   float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2}, // the lower middle one
	} {
		in := slices.Clone(c.values)
		if got := median(c.values); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.values, got, c.want)
		}
		if !slices.Equal(in, c.values) {
			t.Errorf("median sorted its argument: %v", c.values)
		}
	}
}

func TestCPUPerRequest(t *testing.T) {
	for _, c := range []struct {
		ticks    int64
		requests int
		want     float64
	}{
		{0, 0, 0},
		{100, 1_000_000, 1}, // a second over a million requests
		{123, 10_000, 123},  // 1.23 s over 10,000
		{1, 3, 3333.3},      // to a tenth
		{250, 1_000_000, 2.5},
	} {
		if got := cpuPerRequest(c.ticks, c.requests); got != c.want {
			t.Errorf("cpuPerRequest(%d, %d) = %v, want %v", c.ticks, c.requests, got, c.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 12345: "12345", 2.5: "2.5", 0.1234567: "0.1234567", 1e7: "10000000"} {
		if got := number(x); got != want {
			t.Errorf("number(%v) = %q, want %q", x, got, want)
		}
	}
}
