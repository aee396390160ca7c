package main

import (
	"strings"
	"testing"
)

func TestSustainVerdict(t *testing.T) {
	steady := func(n int, cpu func(i int) float64) []window {
		var ws []window
		for i := range n {
			ws = append(ws, window{n: i + 1, perSecond: 1000, cpu: cpu(i)})
		}
		return ws
	}
	flat := func(int) float64 { return 100 }
	slow := steady(30, flat)
	slow[7].perSecond = 800
	growing := steady(30, func(i int) float64 {
		if i >= 24 {
			return 120
		}
		return 100
	})
	short := steady(3, flat)
	short[2].cpu = 114
	for _, c := range []struct {
		name    string
		windows []window
		pass    bool
		lines   []string
	}{
		{"too few", steady(2, flat), false, []string{"sustain: too few windows for a verdict"}},
		{"steady five minutes", steady(30, flat), true, []string{
			"sustain: 30 windows; median 1000 bookings/s; lowest 1000 (window 1) = 1.00x the median (target >= 0.85)",
			"sustain: PostgreSQL CPU per booking: first 60 s 100.0 µs, last 60 s 100.0 µs = 1.00x (target <= 1.15)",
			"sustain: PASS",
		}},
		{"a slow window", slow, false, []string{
			"sustain: 30 windows; median 1000 bookings/s; lowest 800 (window 8) = 0.80x the median (target >= 0.85)",
			"sustain: PostgreSQL CPU per booking: first 60 s 100.0 µs, last 60 s 100.0 µs = 1.00x (target <= 1.15)",
			"sustain: FAIL",
		}},
		{"CPU per booking grows", growing, false, []string{
			"sustain: 30 windows; median 1000 bookings/s; lowest 1000 (window 1) = 1.00x the median (target >= 0.85)",
			"sustain: PostgreSQL CPU per booking: first 60 s 100.0 µs, last 60 s 120.0 µs = 1.20x (target <= 1.15)",
			"sustain: FAIL",
		}},
		{"under two minutes: thirds", short, true, []string{
			"sustain: 3 windows; median 1000 bookings/s; lowest 1000 (window 1) = 1.00x the median (target >= 0.85)",
			"sustain: PostgreSQL CPU per booking: first 10 s 100.0 µs, last 10 s 114.0 µs = 1.14x (target <= 1.15)",
			"sustain: PASS",
		}},
	} {
		lines, pass := sustainVerdict(c.windows, 10)
		if pass != c.pass || strings.Join(lines, "\n") != strings.Join(c.lines, "\n") {
			t.Errorf("%s: pass %v, lines\n%s\nwant pass %v, lines\n%s", c.name, pass, strings.Join(lines, "\n"), c.pass, strings.Join(c.lines, "\n"))
		}
	}
}
