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
	windows := serviceWindows(samples)
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
