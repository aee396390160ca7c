package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestUserOfSpreadsContendersOverSeats: with 2,000 users racing for 200
// seats 20 times each (make compare's contended scenario), every seat's 20
// requests come from 20 different users, and each pass through the users
// uses all of them once.
func TestUserOfSpreadsContendersOverSeats(t *testing.T) {
	const users, seats, perSeat = 2000, 200, 20
	askedBy := make(map[int]map[int]bool, seats)
	for i := range seats * perSeat {
		seat := i % seats
		if askedBy[seat] == nil {
			askedBy[seat] = map[int]bool{}
		}
		askedBy[seat][userOf(i, users)] = true
	}
	for seat, us := range askedBy {
		if len(us) != perSeat {
			t.Fatalf("seat %d was asked by %d distinct users, want %d", seat, len(us), perSeat)
		}
	}
	for pass := range 3 {
		seen := make(map[int]bool, users)
		for i := pass * users; i < (pass+1)*users; i++ {
			seen[userOf(i, users)] = true
		}
		if len(seen) != users {
			t.Fatalf("pass %d used %d distinct users, want %d", pass, len(seen), users)
		}
	}
}

// TestFireEndsWhileAScheduleIsMade: a fresh-seats run whose phase ends
// (its last request number handed out) while a worker is making the next
// schedule cancels that making; the run ended, nothing failed, and fire
// reports no error.
func TestFireEndsWhileAScheduleIsMade(t *testing.T) {
	making := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), fmt.Sprintf(`"seatId":%d}`, maxSeats)) {
			<-making // the last seat's answer comes once the next schedule is being made
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"code":"seat_taken"}`))
	}))
	t.Cleanup(srv.Close)

	var made atomic.Int32
	w := &workload{newSchedule: func(ctx context.Context) (int64, error) {
		if made.Add(1) == 1 {
			return 1, nil
		}
		close(making)
		<-ctx.Done() // made only when the run goes on
		return 0, ctx.Err()
	}}
	a := newAPI(2, 1, 10*time.Second, clientStd)
	t.Cleanup(a.close)
	cfg := config{Scenario: scenarioFreshSeats, Targets: []string{srv.URL}, N: maxSeats + 1, C: 2, Users: 1}
	res := fire(context.Background(), a, cfg, w, []user{{id: "u", token: "t"}}, nil)
	if made.Load() != 2 {
		t.Fatalf("made %d schedules, want the first and a cancelled second", made.Load())
	}
	if res.err != nil {
		t.Fatalf("fire reported %v for a schedule the run's end cancelled", res.err)
	}
	if sent := countSent(res.outcomes); sent != maxSeats {
		t.Fatalf("sent %d requests, want %d (the seats of the first schedule)", sent, maxSeats)
	}
}

func countSent(outcomes []outcome) int {
	n := 0
	for _, o := range outcomes {
		if o.Sent {
			n++
		}
	}
	return n
}
