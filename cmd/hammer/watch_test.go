package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The watcher matches each 200 with its seat's "reserved" event: a late
// event is a delay, an early one counts as 0, and a booking without an
// event is reported missing.
func TestWatcherMatchesBookingsWithEvents(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/schedules/7/seats/events" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 0-0\nevent: snapshot\ndata: {\"scheduleId\":7,\"seats\":[]}\n\n")
		_, _ = fmt.Fprint(w, "id: 1-0\nevent: seat\ndata: {\"seatId\":1,\"status\":\"reserved\"}\n\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = fmt.Fprint(w, ": keep-alive\n\nid: 2-0\nevent: seat\ndata: {\"seatId\":2,\"status\":\"held\"}\n\n")
		_, _ = fmt.Fprint(w, "id: 3-0\nevent: seat\ndata: {\"seatId\":2,\"status\":\"reserved\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer close(release)

	w := newWatcher(srv.URL, 0, formFull, "reserved")
	if err := w.follow(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	time.Sleep(50 * time.Millisecond)
	release <- struct{}{}
	r := w.finish([]outcome{
		{Seat: seatRef{7, 1}, Status: 200, At: answered.Add(time.Hour)}, // its event came first
		{Seat: seatRef{7, 2}, Status: 200, At: answered},                // its event comes 50 ms later
		{Seat: seatRef{7, 3}, Status: 200, At: answered},                // no event at all
		{Seat: seatRef{7, 4}, Status: 409, Code: "seat_taken", At: answered},
	})
	if r.Booked != 3 || r.Matched != 2 || r.Early != 1 || len(r.Missing) != 1 || r.Missing[0] != "7/3" {
		t.Fatalf("report = %+v, want 3 booked, 2 matched (1 early), 7/3 missing", r)
	}
	if d := time.Duration(r.Delay.Max); d < 40*time.Millisecond || d > 5*time.Second {
		t.Errorf("max delay %s, want about the 50 ms the second event was held back", d)
	}
	if w.follow(context.Background(), 8) == nil {
		t.Error("following an unknown schedule succeeded")
	}
}

// A stream the server ends (its instance shutting down) is reopened with
// Last-Event-ID: the changes after it are matched, and a reopen answered
// with a snapshot (the id no longer known) counts its reserved seats.
func TestWatcherResumesWithLastEventID(t *testing.T) {
	t.Parallel()
	var (
		opens = make(chan string, 4)
		n     int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n++
		opens <- r.Header.Get("Last-Event-ID")
		switch n {
		case 1: // first stream: a snapshot and one change, then the server ends it
			_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 0-0\nevent: snapshot\ndata: {\"scheduleId\":7,\"seats\":[]}\n\n")
			_, _ = fmt.Fprint(w, "id: 1-0\nevent: seat\ndata: {\"seatId\":1,\"status\":\"reserved\"}\n\n")
		case 2: // resumed after 1-0: the change missed meanwhile, then ended again
			_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 2-0\nevent: seat\ndata: {\"seatId\":2,\"status\":\"reserved\"}\n\n")
		default: // 2-0 is no longer kept: a fresh snapshot
			_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 3-0\nevent: snapshot\ndata: {\"scheduleId\":7,\"seats\":[{\"seatId\":3,\"status\":\"reserved\"}]}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()

	w := newWatcher(srv.URL, 0, formFull, "reserved")
	if err := w.follow(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "1-0", "2-0"} {
		select {
		case got := <-opens:
			if got != want {
				t.Errorf("open %d: Last-Event-ID %q, want %q", i+1, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("open %d never came", i+1)
		}
	}
	at := time.Now().Add(-time.Second)
	r := w.finish([]outcome{{Seat: seatRef{7, 1}, Status: 200, At: at}, {Seat: seatRef{7, 2}, Status: 200, At: at}, {Seat: seatRef{7, 3}, Status: 200, At: at}})
	if r.Matched != 3 || len(r.Missing) != 0 || r.Resumed != 2 || r.Error != "" {
		t.Fatalf("report = %+v, want all 3 bookings seen over 2 resumed streams", r)
	}
}

// With -form compact the streams ask for the compact form, and a snapshot
// of it (here on a reopen) counts the seats its characters say are of the
// status watched.
func TestWatcherReadsTheCompactForm(t *testing.T) {
	t.Parallel()
	var (
		queries = make(chan string, 4)
		n       int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n++
		queries <- r.URL.RawQuery
		switch n {
		case 1:
			_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 0-0\nevent: snapshot\ndata: {\"scheduleId\":7,\"version\":1,\"sections\":[{\"name\":\"\",\"rows\":[{\"label\":\"A\",\"firstSeatId\":1,\"status\":\"aaaa\"}]}]}\n\n")
			_, _ = fmt.Fprint(w, "id: 1-0\nevent: seat\ndata: {\"seatId\":1,\"status\":\"held\",\"label\":\"101-A1\",\"section\":\"101\",\"row\":\"A\",\"number\":1}\n\n")
		default: // a fresh snapshot: seats 2 and 4 held since
			_, _ = fmt.Fprint(w, "retry: 1000\n\nid: 3-0\nevent: snapshot\ndata: {\"scheduleId\":7,\"version\":3,\"sections\":[{\"name\":\"101\",\"rows\":[{\"label\":\"A\",\"firstSeatId\":1,\"status\":\"hhr\"}]},{\"name\":\"102\",\"rows\":[{\"label\":\"A\",\"firstSeatId\":4,\"status\":\"h\"}]}]}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()

	w := newWatcher(srv.URL, 0, formCompact, "held")
	if err := w.follow(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		select {
		case q := <-queries:
			if q != "form=compact" {
				t.Errorf("open %d: query %q, want form=compact", i+1, q)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("open %d never came", i+1)
		}
	}
	r := w.finishHolds(7, []holdOutcome{held("h1", 2, 1, 2), held("h2", 2, 3, 4)})
	if r.Matched != 3 || len(r.Missing) != 1 || r.Missing[0] != "7/3" || r.SnapshotForm != formCompact || r.Form != formCompact ||
		r.Status != "held" || r.SnapshotBytes < 80 || r.Error != "" {
		t.Fatalf("report = %+v, want seats 1, 2 and 4 seen held, 3 (reserved) missing, a compact snapshot", r)
	}
}
