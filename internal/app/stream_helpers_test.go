package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/seatfeed"
)

// sse is one Server-Sent Event as a client sees it.
type sse struct {
	id, name, data string
	comment        bool
}

// eventStream reads a live seat map stream in the background.
type eventStream struct {
	t      *testing.T
	resp   *http.Response
	cancel context.CancelFunc
	events chan sse
}

// stream opens GET /schedules/{id}/seats/events on instance base.
func (h *harness) stream(base int, schedule int64, lastEventID string) *eventStream {
	h.t.Helper()
	return h.streamPath(base, fmt.Sprintf("/schedules/%d/seats/events", schedule), lastEventID)
}

// streamPath opens the stream at path (with its query) on instance base.
func (h *harness) streamPath(base int, path, lastEventID string) *eventStream {
	h.t.Helper()
	header := http.Header{}
	if lastEventID != "" {
		header.Set("Last-Event-ID", lastEventID)
	}
	return h.streamWith(base, path, header)
}

// streamWith opens the stream at path on instance base with header.
func (h *harness) streamWith(base int, path string, header http.Header) *eventStream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.bases[base]+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header = header.Clone()
	req.Header.Set("Accept", "text/event-stream")
	// No client timeout: the stream is meant to stay open.
	resp, err := (&http.Client{Transport: h.client.Transport}).Do(req)
	if err != nil {
		cancel()
		h.t.Fatalf("open stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		_ = resp.Body.Close()
		h.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &eventStream{t: h.t, resp: resp, cancel: cancel, events: make(chan sse, 10000)}
	go s.read()
	h.t.Cleanup(s.close)
	return s
}

func (s *eventStream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// read parses the stream until it ends, then closes events.
func (s *eventStream) read() {
	defer close(s.events)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev != (sse{}) {
				s.events <- ev
			}
			ev = sse{}
		case strings.HasPrefix(line, ":"):
			s.events <- sse{comment: true, data: strings.TrimSpace(line[1:])}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
}

// next returns the next event that is not a comment, or fails after wait.
func (s *eventStream) next(wait time.Duration) sse {
	s.t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				s.t.Fatal("the stream ended")
			}
			if !ev.comment {
				return ev
			}
		case <-timeout:
			s.t.Fatalf("no event within %s", wait)
		}
	}
}

// seatEvent waits for the seat event of seat with status, and fails on a
// stream that ends or stays silent for wait.
func (s *eventStream) seatEvent(seat int, status string, wait time.Duration) sse {
	s.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		ev := s.next(time.Until(deadline))
		var d struct {
			SeatID int    `json:"seatId"`
			Status string `json:"status"`
		}
		if ev.name == "seat" && json.Unmarshal([]byte(ev.data), &d) == nil && d.SeatID == seat && d.Status == status {
			return ev
		}
	}
}

// snapshotSeats decodes a snapshot event: seat id -> status.
func snapshotSeats(t *testing.T, ev sse) map[int]string {
	t.Helper()
	if ev.name != "snapshot" || ev.id == "" {
		t.Fatalf("want a snapshot with an id, got %+v", ev)
	}
	var m struct {
		Seats []struct {
			SeatID int    `json:"seatId"`
			Status string `json:"status"`
		} `json:"seats"`
	}
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("snapshot data: %v", err)
	}
	out := map[int]string{}
	for _, s := range m.Seats {
		out[s.SeatID] = s.Status
	}
	return out
}

// streamStatus opens a stream on instance 0, returns its status and
// closes it at once.
func (h *harness) streamStatus(schedule int64) int {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/schedules/%d/seats/events", h.bases[0], schedule), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: h.client.Transport}).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// streamedStatuses reads schedule's seat feed from Redis and returns each
// seat's statuses in the order streamed, and how many entries there are.
// It fails the test on an entry without a position, and reports a
// position streamed twice or a seat's positions out of order.
func (h *harness) streamedStatuses(schedule int64) (map[int][]string, int) {
	h.t.Helper()
	entries, err := h.redis.XRange(context.Background(), seatfeed.StreamKey(schedule), "-", "+").Result()
	if err != nil {
		h.t.Fatal(err)
	}
	got := map[int][]string{}
	positions := map[int64]bool{}
	lastPos := map[int]int64{}
	for _, e := range entries {
		seat, _ := strconv.Atoi(fmt.Sprint(e.Values["seat"]))
		pos, err := strconv.ParseInt(fmt.Sprint(e.Values["pos"]), 10, 64)
		if err != nil {
			h.t.Fatalf("entry %s has no position: %v", e.ID, e.Values)
		}
		if positions[pos] {
			h.t.Errorf("schedule %d: position %d streamed twice", schedule, pos)
		}
		positions[pos] = true
		if pos <= lastPos[seat] {
			h.t.Errorf("schedule %d seat %d: position %d after %d", schedule, seat, pos, lastPos[seat])
		}
		lastPos[seat] = pos
		got[seat] = append(got[seat], fmt.Sprint(e.Values["status"]))
	}
	return got, len(entries)
}
