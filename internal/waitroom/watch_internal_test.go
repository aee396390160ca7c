package waitroom

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// placesStore is a Store that knows every ticket of the schedules not
// gone (all waiting, first in line), counting the reads of PlacesOf and
// the schedules each asked for; nothing else of it is used.
type placesStore struct {
	Store
	mu    sync.Mutex
	gone  map[int64]bool
	reads []int
}

func (s *placesStore) snapshot(n int) Snapshot {
	snap := Snapshot{Now: time.Now(), Settings: Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: 10}}
	for range n {
		snap.Places = append(snap.Places, Place{Found: true, UserID: "buyer", State: Waiting, Position: 1})
	}
	return snap
}

func (s *placesStore) Places(_ context.Context, _ int64, tickets ...string) (Snapshot, error) {
	return s.snapshot(len(tickets)), nil
}

func (s *placesStore) PlacesOf(_ context.Context, tickets map[int64][]string) (map[int64]Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, len(tickets))
	snaps := map[int64]Snapshot{}
	for id, ts := range tickets {
		if !s.gone[id] {
			snaps[id] = s.snapshot(len(ts))
		}
	}
	return snaps, nil
}

func (s *placesStore) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reads)
}

// TestWatchesReadOnceForEverySchedule: the tickets watched on an instance,
// of three schedules, are read in one call a tick; a schedule whose queue
// is gone ends its watches; with nothing watched, nothing is read.
func TestWatchesReadOnceForEverySchedule(t *testing.T) {
	store := &placesStore{gone: map[int64]bool{}}
	r := NewRoom(store, NewAdmissions([]byte("k")), Config{WatchEvery: 10 * time.Millisecond})
	var watches []*Watch
	for schedule := int64(1); schedule <= 3; schedule++ {
		for i := range 2 {
			ticket := fmt.Sprintf("%d-%032x", schedule, i)
			w, _, err := r.Watch(context.Background(), ticket, "buyer")
			if err != nil {
				t.Fatal(err)
			}
			watches = append(watches, w)
		}
	}
	for _, w := range watches {
		select {
		case got := <-w.C:
			if got.State != Waiting || got.Position != 1 {
				t.Fatalf("watched %s: %+v", w.ticket, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no update", w.ticket)
		}
	}
	store.mu.Lock()
	for _, n := range store.reads {
		if n != 3 {
			t.Errorf("a read asked for %d schedules, want the 3 in one", n)
		}
	}
	store.gone[3] = true
	store.mu.Unlock()
	for _, w := range watches[4:] {
		deadline := time.After(10 * time.Second)
		for open := true; open; {
			select {
			case _, open = <-w.C:
			case <-deadline:
				t.Fatalf("the watch of a gone queue's %s is not closed", w.ticket)
			}
		}
	}
	for _, w := range watches[:4] {
		r.Unwatch(w)
	}
	time.Sleep(500 * time.Millisecond) // the follower's last tick, on a busy machine
	stopped := store.readCount()
	time.Sleep(100 * time.Millisecond)
	if n := store.readCount(); n != stopped {
		t.Fatalf("%d reads with nothing watched", n-stopped)
	}
}
