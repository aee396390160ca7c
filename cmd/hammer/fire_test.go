package main

import "testing"

func TestPlanSpreadsSeatsAndTargets(t *testing.T) {
	seats := []int{1, 2, 3}
	const n, targets = 600, 2
	perSeat := map[int]int{}
	perSeatTarget := map[[2]int]int{}
	prevTarget := -1
	for i := range n {
		seat, target := plan(i, seats, targets)
		perSeat[seat]++
		perSeatTarget[[2]int{seat, target}]++
		if i%len(seats) != 0 && target == prevTarget {
			t.Fatalf("request %d goes to target %d like the one before it", i, target)
		}
		prevTarget = target
	}
	for _, s := range seats {
		if perSeat[s] != n/len(seats) {
			t.Errorf("seat %d gets %d requests, want %d", s, perSeat[s], n/len(seats))
		}
		for tg := range targets {
			if got := perSeatTarget[[2]int{s, tg}]; got != n/len(seats)/targets {
				t.Errorf("seat %d via target %d gets %d requests, want %d", s, tg, got, n/len(seats)/targets)
			}
		}
	}
}

func TestPlanUsesGivenSeat(t *testing.T) {
	for i := range 10 {
		if seat, target := plan(i, []int{42}, 3); seat != 42 || target != i%3 {
			t.Fatalf("plan(%d) = seat %d target %d, want seat 42 target %d", i, seat, target, i%3)
		}
	}
}
