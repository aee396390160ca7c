package app_test

import (
	"net/http"
	"testing"

	"github.com/seatlock/seatlock/internal/config"
)

// imageForms are the two ways an instance keeps its image of a
// schedule's seats: by the seat feed (with Redis), and polled from
// PostgreSQL (a deployment without Redis).
var imageForms = []struct {
	name string
	tune func(*config.Config)
}{
	{"feed", func(*config.Config) {}},
	{"polled", func(cfg *config.Config) {
		cfg.LockBackend = config.BackendPostgres
		cfg.RedisURL = ""
	}},
}

// TestBestAvailableTakesFreedSeatsAtOnce: the seats of a best-available
// hold that the same instance then frees (the hold released; or confirmed
// and its reservations cancelled) are free for best available there at
// once, as they are for the seat map and for a hold that names them:
// the instance's own change is in its image before the change's event
// arrives, and its choice of best seats reads that image.
func TestBestAvailableTakesFreedSeatsAtOnce(t *testing.T) {
	t.Parallel()
	for _, form := range imageForms {
		t.Run(form.name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessWith(t, 2, form.tune)
			// A box of 4 seats: a hold of 4 in it takes every one.
			schedule := h.createSections(section("Box", "", row("A", 4)), section("Stalls", "", row("A", 10)))
			box := map[string]any{"scheduleId": schedule, "quantity": 4, "section": "Box"}
			holdBox := func(step string) string {
				t.Helper()
				got := h.holdBest(0, "alice", box)
				if got.status != http.StatusCreated {
					t.Fatalf("best 4 in the box %s: %d %s, want 201 with the box's 4 seats", step, got.status, got.raw)
				}
				if ids := seatIDs(t, got); len(ids) != 4 || ids[0] != 1 || ids[3] != 4 {
					t.Fatalf("best 4 in the box %s = %v, want seats 1..4", step, ids)
				}
				return str(got.body, "id")
			}

			released := holdBox("at first")
			if r := h.release(0, "alice", released); r.status != http.StatusNoContent {
				t.Fatalf("release: %d %s", r.status, r.raw)
			}
			confirmed := holdBox("right after its release")

			c := h.confirm(0, "alice", confirmed)
			if c.status != http.StatusOK {
				t.Fatalf("confirm: %d %s", c.status, c.raw)
			}
			for _, r := range c.body["reservations"].([]any) {
				if resp := h.cancel(0, "alice", str(r.(map[string]any), "id")); resp.status != http.StatusNoContent {
					t.Fatalf("cancel: %d %s", resp.status, resp.raw)
				}
			}
			holdBox("right after its reservations were cancelled")
		})
	}
}
