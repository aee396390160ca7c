package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

type compactMap struct {
	ScheduleID int64 `json:"scheduleId"`
	Version    int64 `json:"version"`
	Sections   []struct {
		Name string `json:"name"`
		Rows []struct {
			Label       string `json:"label"`
			FirstSeatID int    `json:"firstSeatId"`
			Category    string `json:"category"`
			Status      string `json:"status"`
		} `json:"rows"`
	} `json:"sections"`
}

var codeOf = map[byte]string{'a': "available", 'h': "held", 'r': "reserved"}

// compactSeats reads a compact map seat by seat: "status section row number category".
func compactSeats(t *testing.T, raw string) (compactMap, map[int]string) {
	t.Helper()
	var m compactMap
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("compact map %s: %v", raw, err)
	}
	seats := map[int]string{}
	for _, s := range m.Sections {
		for _, r := range s.Rows {
			for i := range len(r.Status) {
				seats[r.FirstSeatID+i] = fmt.Sprintf("%s %s %s %d %s", codeOf[r.Status[i]], s.Name, r.Label, i+1, r.Category)
			}
		}
	}
	return m, seats
}

// The compact map says, seat by seat, what the full map says, after
// bookings, holds and a release; its version grows with the changes, and
// the live stream's compact snapshot is the same map.
func TestCompactSeatMapAgreesWithTheFullMap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSections(
		section("114", "lower", row("A", 4), row("B", 3, "vip")),
		section("North", "", row("A", 5)))
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	first := h.do(request{method: http.MethodGet, path: path + "?form=compact"})
	before, _ := compactSeats(t, first.raw)

	if r := h.reserve(0, "alice", schedule, 2); r.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", r.status, r.raw)
	}
	h.mustHold(0, "bob", schedule, 5, 6)
	released := h.mustHold(0, "carol", schedule, 9)
	if r := h.release(0, "carol", released); r.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", r.status, r.raw)
	}
	h.settle(schedule)
	compact := h.do(request{method: http.MethodGet, path: path + "?form=compact"})
	full := h.do(request{method: http.MethodGet, path: path})
	m, seats := compactSeats(t, compact.raw)
	if m.ScheduleID != schedule || m.Version <= before.Version || len(seats) != 12 {
		t.Fatalf("compact map: schedule %d, version %d (before %d), %d seats", m.ScheduleID, m.Version, before.Version, len(seats))
	}
	for _, s := range full.body["seats"].([]any) {
		s := s.(map[string]any)
		id := int(s["seatId"].(float64))
		want := fmt.Sprintf("%s %s %s %v %s", s["status"], s["section"], s["row"], s["number"], s["category"])
		if seats[id] != want {
			t.Errorf("seat %d: compact %q, full %q", id, seats[id], want)
		}
	}
	if got := seats[2] + "|" + seats[5] + "|" + seats[6] + "|" + seats[9]; got != "reserved 114 A 2 lower|held 114 B 1 vip|held 114 B 2 vip|available North A 2 standard" {
		t.Errorf("changed seats: %s", got)
	}

	stream := h.streamPath(0, path+"/events?form=compact", "")
	defer stream.close()
	snapshot := stream.next(5 * time.Second)
	if snapshot.name != "snapshot" || strings.TrimSpace(snapshot.data) != strings.TrimSpace(compact.raw) {
		t.Errorf("compact snapshot %s %s, want the compact map %s", snapshot.name, snapshot.data, compact.raw)
	}
	if r := h.reserve(0, "dave", schedule, 12); r.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", r.status, r.raw)
	}
	ev := stream.seatEvent(12, "reserved", 5*time.Second)
	if !strings.Contains(ev.data, `"label":"North-A5","section":"North"`) {
		t.Errorf("seat event %s", ev.data)
	}
	bad := h.do(request{method: http.MethodGet, path: path + "/events?form=tiny"})
	expectProblem(t, bad, http.StatusUnprocessableEntity, "validation_failed")
}
