package main

import (
	"testing"
	"time"
)

func TestServiceWindows(t *testing.T) {
	samples := []queueSample{
		{At: 0, Admitted: 0, Waiting: 900},
		{At: 10 * time.Second, Admitted: 500, Waiting: 400},
		{At: 20 * time.Second, Admitted: 960, Waiting: 0},
	}
	windows := serviceWindows(samples, 50, 0)
	if len(windows) != 2 || windows[0].PerSec != 50 || windows[0].Partial || windows[1].PerSec != 46 || !windows[1].Partial {
		t.Fatalf("windows: %+v", windows)
	}
	// The window in which the line ran dry is not weighed.
	if worst, weighed := worstRateDeviation(windows, 50); worst != 0 || weighed != 1 {
		t.Fatalf("against 50: %v over %d", worst, weighed)
	}
	if worst, _ := worstRateDeviation(windows, 40); worst != 0.25 {
		t.Fatalf("against 40: %v", worst)
	}
}

// A window whose start or end found maxActive's places full admitted as
// buyers left, not at the rate: it is not weighed, and says so.
func TestServiceWindowsHeldBackByMaxActive(t *testing.T) {
	samples := []queueSample{
		{At: 0, Admitted: 0, Waiting: 2000, Active: 0},
		{At: 10 * time.Second, Admitted: 500, Waiting: 1500, Active: 150}, // 50 places free: a second's worth, not full
		{At: 20 * time.Second, Admitted: 700, Waiting: 1300, Active: 199}, // full: the windows on both sides held back
		{At: 30 * time.Second, Admitted: 900, Waiting: 1100, Active: 120},
		{At: 40 * time.Second, Admitted: 1400, Waiting: 600, Active: 100},
		{At: 50 * time.Second, Admitted: 1900, Waiting: 100, Active: 151}, // 49 free: full
	}
	windows := serviceWindows(samples, 50, 200)
	var heldBack []bool
	for _, w := range windows {
		heldBack = append(heldBack, w.HeldBack)
	}
	want := []bool{false, true, true, false, true}
	if len(heldBack) != len(want) {
		t.Fatalf("windows: %+v", windows)
	}
	for i := range want {
		if heldBack[i] != want[i] {
			t.Fatalf("held back: %v, want %v (%+v)", heldBack, want, windows)
		}
	}
	if worst, weighed := worstRateDeviation(windows, 50); worst != 0 || weighed != 2 {
		t.Fatalf("weighed: %v over %d, want 0 over the 2 windows maxActive left alone", worst, weighed)
	}
	a := accuracyOf(windows, 50)
	if len(a.Windows) != 2 || a.HeldBack != 3 || a.Worst != 1 {
		t.Fatalf("accuracy: %+v", a)
	}
	// Without a cap the same counts are weighed, and the slow ones show.
	if _, weighed := worstRateDeviation(serviceWindows(samples, 50, 0), 50); weighed != 5 {
		t.Fatalf("no cap: %d windows weighed, want 5", weighed)
	}
	if got := windowRates(windows, "nobody left waiting"); got != "50.0, 20.0 (maxActive full), 20.0 (maxActive full), 50.0, 50.0 (maxActive full)" {
		t.Fatalf("text: %q", got)
	}
}
