package app_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/seatlock/seatlock/internal/config"
)

// A user's live holds are capped by MAX_HOLDS_PER_USER, even when many
// are asked for at once through two instances; releasing one makes room,
// and other users are not affected.
func TestHoldsPerUserAreCapped(t *testing.T) {
	t.Parallel()
	const maxHolds = 3
	h := newHarnessWith(t, 2, func(cfg *config.Config) { cfg.MaxHoldsPerUser = maxHolds })
	schedule := h.createSchedule(30)

	var mu sync.Mutex
	var held []string
	codes := map[string]int{}
	var wg sync.WaitGroup
	for seat := 1; seat <= 12; seat++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := h.hold(seat%2, "collector", schedule, seat)
			mu.Lock()
			defer mu.Unlock()
			switch resp.status {
			case http.StatusCreated:
				held = append(held, resp.body["id"].(string))
			default:
				codes[resp.code()]++
			}
		}()
	}
	wg.Wait()
	if len(held) != maxHolds || codes["too_many_holds"] != 12-maxHolds {
		t.Fatalf("12 holds at once with a cap of %d: %d made, refusals %v", maxHolds, len(held), codes)
	}
	expectProblem(t, h.hold(0, "collector", schedule, 20), http.StatusConflict, "too_many_holds")
	if resp := h.hold(0, "someone-else", schedule, 21); resp.status != http.StatusCreated {
		t.Errorf("another user's hold: %d %s", resp.status, resp.raw)
	}

	if resp := h.release(0, "collector", held[0]); resp.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", resp.status, resp.raw)
	}
	if resp := h.hold(1, "collector", schedule, 22); resp.status != http.StatusCreated {
		t.Errorf("a hold after releasing one: %d %s", resp.status, resp.raw)
	}
	// Refused holds claimed nothing.
	statuses := h.seatStatuses(schedule)
	heldSeats := 0
	for _, status := range statuses {
		if status == "held" {
			heldSeats++
		}
	}
	if heldSeats != maxHolds+1 {
		t.Errorf("%d seats held, want %d (the collector's %d and someone else's)", heldSeats, maxHolds+1, maxHolds)
	}
}
