package main

import (
	"strings"
	"testing"
	"time"
)

// Each answered hold of a hall goes in the window it was sent in, from
// the first opening; the stadium's holds and the unanswered are left out.
func TestHoldsOverTimeByWhenSent(t *testing.T) {
	opens := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	hold := func(sentAfter, took time.Duration, status int) holdOutcome {
		return holdOutcome{outcome: outcome{Status: status, Latency: took, At: opens.Add(sentAfter + took)}}
	}
	hall := &sale{opensAt: opens.Add(time.Second)}
	stadium := &sale{opensAt: opens, stadium: true}
	runs := [][]buyerRun{
		{{Holds: []holdOutcome{hold(0, 3*time.Second, 409)}}},
		{
			// Sent 2 s in, answered 14 s in: the first window's.
			{Holds: []holdOutcome{hold(2*time.Second, 12*time.Second, 409), hold(15*time.Second, 20*time.Millisecond, 201)}},
			{Holds: []holdOutcome{hold(9*time.Second, time.Second, 201), hold(31*time.Second, 5*time.Second, 0)}},
			{Holds: []holdOutcome{hold(35*time.Second, 40*time.Millisecond, 201)}},
		},
	}
	sales := []*sale{stadium, hall}
	if got := firstOpening(sales); !got.Equal(opens) {
		t.Fatalf("first opening %v, want %v", got, opens)
	}
	windows := holdsOverTime(sales, runs, opens)
	want := []struct {
		holds int
		p99   time.Duration
	}{{2, 12 * time.Second}, {1, 20 * time.Millisecond}, {0, 0}, {1, 40 * time.Millisecond}}
	if len(windows) != len(want) {
		t.Fatalf("%d windows, want %d: %+v", len(windows), len(want), windows)
	}
	for i, w := range windows {
		if time.Duration(w.From) != time.Duration(i)*holdWindowLength || w.Holds != want[i].holds || !near(time.Duration(w.P99), want[i].p99) {
			t.Errorf("window %d: %+v, want %d holds from %v with p99 %v", i, w, want[i].holds, time.Duration(i)*holdWindowLength, want[i].p99)
		}
	}
	if text := holdWindowsText(windows); !strings.HasPrefix(text, "0s ") || strings.Count(text, ",") != len(windows)-1 {
		t.Errorf("text %q", text)
	}
}

// near: within the latency histogram's precision.
func near(got, want time.Duration) bool {
	return got >= want && got <= want+want/100+time.Millisecond
}
