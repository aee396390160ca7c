package redisroom_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// TestPlacesOfReadsEveryScheduleAtOnce: the places of tickets of three
// schedules are read in one pipeline; a schedule whose queue is gone is
// left out.
func TestPlacesOfReadsEveryScheduleAtOnce(t *testing.T) {
	store, calls := instance(t, lockenv.Name("queue-test-")+"/")
	ids := putQueues(t, store, 3, waitroom.Settings{OpensAt: time.Now().Add(time.Hour), AdmitPerSecond: 1, AdmissionTTL: time.Hour})
	tickets := map[int64][]string{}
	for i, id := range ids {
		for b := range i + 1 {
			tickets[id] = append(tickets[id], join(t, store, id, fmt.Sprint("buyer", b)))
		}
	}
	gone := rand.Int64N(1<<50) + 1
	tickets[gone] = []string{fmt.Sprintf("%d-%032x", gone, 1)}
	before := calls.pipelines.Load()
	snaps, err := store.PlacesOf(context.Background(), tickets)
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.pipelines.Load() - before; n != 1 {
		t.Fatalf("read in %d pipelines, want 1", n)
	}
	if _, ok := snaps[gone]; ok || len(snaps) != 3 {
		t.Fatalf("snapshots of %d schedules (the gone one among them: %v), want the 3 with a queue", len(snaps), ok)
	}
	for i, id := range ids {
		if len(snaps[id].Places) != i+1 {
			t.Fatalf("schedule %d: %d places, want %d", i, len(snaps[id].Places), i+1)
		}
		for _, p := range snaps[id].Places {
			if !p.Found || p.State != waitroom.Prequeue {
				t.Fatalf("schedule %d: %+v", i, p)
			}
		}
	}
}
