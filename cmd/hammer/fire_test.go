package main

import "testing"

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
