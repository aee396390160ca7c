package main

import (
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// -scenario seat-map reads the compact seat map with gzip from every
// client, half of them revalidating: the plain ones get 200s, the others
// 304s once they have the map, and the report counts both.
func TestSeatMapScenario(t *testing.T) {
	f := newFakeAPI(t)
	urls, counters := f.serve(t, 2)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "seat-map", "-sections", "2", "-rows", "5", "-row-seats", "20",
		"-c", "8", "-duration", "500ms"))
	text := textOf(t, r)
	sm := r.SeatMap
	if !r.Verdict.Pass || sm == nil {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	if sm.SeatCount != 200 || sm.Clients != 8 || sm.Revalidating != 4 || sm.Form != formCompact || !slices.Equal(sm.FormsSeen, []string{formCompact}) ||
		sm.Samples != 8 || len(sm.BadSamples) != 0 {
		t.Errorf("seat map %+v", sm)
	}
	// The revalidating clients get one 200 each (nothing changes), then 304s.
	if sm.OK < 8 || sm.NotModified == 0 || sm.Revalidations != sm.NotModified || sm.ChangedOK != 0 || sm.UnaskedNotModified != 0 ||
		sm.OK+sm.NotModified != sm.Requests || sm.Requests != r.Sent || sm.GzipOK != sm.OK || sm.NoETag != 0 {
		t.Errorf("counts: %d requests, %d 200 (%d gzip), %d 304, %d revalidations, %d changed, %d unasked",
			sm.Requests, sm.OK, sm.GzipOK, sm.NotModified, sm.Revalidations, sm.ChangedOK, sm.UnaskedNotModified)
	}
	f.mu.Lock()
	wantBytes := len(f.schedules[sm.Schedule].compactJSON(sm.Schedule))
	f.mu.Unlock()
	if sm.BytesPerOK <= 0 || sm.BytesPerOK >= float64(wantBytes) {
		t.Errorf("%.0f bytes a 200, want fewer than the %d of the compact form: gzip-compressed", sm.BytesPerOK, wantBytes)
	}
	if sm.PerSec <= 0 || sm.NotModifiedPerSec <= 0 || sm.OKLatency.P99 <= 0 || sm.NotModLatency.P99 <= 0 || time.Duration(sm.Wall) < 500*time.Millisecond {
		t.Errorf("rates %v/s, %v 304s/s, p99 %s / %s, wall %s", sm.PerSec, sm.NotModifiedPerSec, sm.OKLatency.P99, sm.NotModLatency.P99, sm.Wall)
	}
	if len(sm.Targets) != 2 || sm.Targets[1].Value != sm.NotModifiedPerSec || !strings.HasPrefix(sm.Targets[0].Name, "p99 of a seat-map read (8 clients, no bookings") {
		t.Errorf("targets %+v", sm.Targets)
	}
	for i, c := range counters {
		if c.get() < sm.Requests/3 {
			t.Errorf("target %d got %d of %d requests, want about half", i, c.get(), sm.Requests)
		}
	}
	if sm.SourceAddresses < 8 {
		t.Errorf("connections from %d loopback addresses, want one each", sm.SourceAddresses)
	}

	// Every client revalidating: one 200 each, then only 304s.
	all := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "seat-map", "-sections", "2", "-rows", "5", "-row-seats", "20",
		"-c", "4", "-revalidating", "4", "-duration", "300ms")).SeatMap
	if all.Revalidating != 4 || all.OK != 4 || all.NotModified != all.Requests-4 || all.NotModified == 0 {
		t.Errorf("all revalidating: %d of %d clients, %d 200, %d 304 of %d requests", all.Revalidating, all.Clients, all.OK, all.NotModified, all.Requests)
	}
	for _, want := range []string{"reads:", "304:", "latency, 304:", "B on the wire on average", "revalidations:", "none (-book-rate 0)", "304s a second", "PASS"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	var got struct {
		SeatMap struct {
			NotModified       int     `json:"notModified"`
			NotModifiedPerSec float64 `json:"notModifiedPerSec"`
			BytesPerOK        float64 `json:"bytesPerOk"`
			OKLatency         struct {
				P99 float64 `json:"p99"`
			} `json:"okLatencyMs"`
		} `json:"seatMap"`
	}
	jsonOf(t, r, &got)
	if got.SeatMap.NotModified != sm.NotModified || got.SeatMap.BytesPerOK != sm.BytesPerOK ||
		got.SeatMap.OKLatency.P99 <= 0 {
		t.Errorf("JSON report: %+v", got)
	}
}

// With -book-rate, bookings go on while the clients read: the revalidating
// clients get 200s as the map changes; an existing -schedule is read as it
// is, in the full form with -form full.
func TestSeatMapScenarioWithBookings(t *testing.T) {
	f := newFakeAPI(t)
	f.hold = 0
	urls, _ := f.serve(t, 1)
	id := f.addSchedule(300, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "seat-map", "-schedule", strconv.FormatInt(id, 10), "-form", "full",
		"-book-rate", "400", "-c", "4", "-duration", "600ms"))
	text := textOf(t, r)
	sm, b := r.SeatMap, r.SeatMap.Bookings
	if !r.Verdict.Pass || b == nil || sm.Schedule != id || sm.SeatCount != 300 || !slices.Equal(sm.FormsSeen, []string{formFull}) {
		t.Fatalf("verdict %+v, seat map %+v", r.Verdict, sm)
	}
	// Seat 1 was booked before; the rest are booked in turn.
	if b.Sent < 100 || b.Sent > 300 || b.Responses[keySeatTaken] != 1 || b.Responses[keyOK] < b.Sent-1-b.Responses[keyCanceled] || b.PerSec < 100 {
		t.Errorf("bookings %+v", b)
	}
	if sm.ChangedOK == 0 || sm.UnaskedNotModified != 0 {
		t.Errorf("%d revalidations answered 200, %d unasked 304s: want the map's changes seen", sm.ChangedOK, sm.UnaskedNotModified)
	}
	if !strings.Contains(sm.Targets[0].Name, "bookings/s going on") || !strings.Contains(text, "bookings:  ") {
		t.Errorf("targets %+v", sm.Targets)
	}
}

// The verdict catches a 304 to a client that never had the map, and a 200
// that is not the schedule's whole map; the compact form a server does
// not have is reported, not failed.
func TestSeatMapScenarioFailures(t *testing.T) {
	f := newFakeAPI(t)
	f.notModifiedAlways = true
	f.fullOnly = true
	urls, _ := f.serve(t, 1)
	id := f.addSchedule(50)
	f.mu.Lock()
	f.schedules[id].version = 1 // as if changed: every read is answered 304
	f.mu.Unlock()
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "seat-map", "-schedule", strconv.FormatInt(id, 10), "-c", "2", "-duration", "200ms"))
	assertFailsWith(t, r, "reads without If-None-Match answered 304 Not Modified")

	if _, err := checkSample([]byte(`{"scheduleId":1,"seats":[{"seatId":1,"status":"held"}]}`), "", venue{ID: 1, SeatCount: 2}); err == nil ||
		!strings.Contains(err.Error(), "has 1 seats, want 2") {
		t.Errorf("a map missing a seat: %v", err)
	}
	if _, err := checkSample([]byte(`{"scheduleId":2,"seats":[]}`), "", venue{ID: 1}); err == nil || !strings.Contains(err.Error(), "schedule 2, want 1") {
		t.Errorf("another schedule's map: %v", err)
	}
	if _, err := checkSample([]byte(`{"scheduleId":1,"seats":[]}`), "br", venue{ID: 1}); err == nil || !strings.Contains(err.Error(), `"br"`) {
		t.Errorf("an encoding not asked for: %v", err)
	}
}

func TestParseConfigSeatMap(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-scenario", "seat-map"}, env, io.Discard)
	want := seatMapConfig{venueConfig: venueConfig{Rows: 40, RowSeats: 50}, Form: formCompact, Revalidating: -1}
	if err != nil || cfg.SeatMap != want || cfg.Duration != defaultReadTime || cfg.N != 0 || cfg.C != 64 {
		t.Errorf("defaults: %+v, %v; want %+v for %s", cfg.SeatMap, err, want, defaultReadTime)
	}
	cfg, err = parseConfig([]string{"-scenario", "seat-map", "-sections", "100", "-rows", "20", "-row-seats", "40", "-form", "full",
		"-book-rate", "250", "-duration", "30s"}, env, io.Discard)
	if err != nil || cfg.SeatMap.capacity() != 80_000 || cfg.SeatMap.Form != formFull || cfg.SeatMap.BookRate != 250 || cfg.Duration != 30*time.Second {
		t.Errorf("stadium: %+v, %v", cfg.SeatMap, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "seat-map", "-schedule", "12"}, envOf(map[string]string{"AUTH_SECRET": testSecret, "HAMMER_BOOK_RATE": "5"}), io.Discard)
	if err != nil || cfg.ScheduleID != 12 || cfg.SeatMap.capacity() != 0 || cfg.SeatMap.BookRate != 5 {
		t.Errorf("existing schedule: %+v, %v", cfg, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "100"}, "-n is for -scenario hot-seat, fresh-seats or contended, not seat-map"},
		{[]string{"-schedule", "3", "-seat", "1"}, "-seat is for -scenario hot-seat or contended, not seat-map"},
		{[]string{"-seats", "3"}, "-seats is for -scenario contended, not seat-map"},
		{[]string{"-watch"}, "-watch is for -scenario fresh-seats, contended or best-available, not seat-map"},
		{[]string{"-schedule", "3", "-sections", "2"}, "-schedule reads an existing schedule"},
		{[]string{"-form", "tiny"}, "-form must be full or compact"},
		{[]string{"-book-rate", "-1"}, "-book-rate must be 0..100000"},
		{[]string{"-c", "4", "-revalidating", "5"}, "-revalidating must be 0..-c (4)"},
		{[]string{"-quantity", "2"}, "-quantity is for -scenario best-available, on-sale or on-sales, not seat-map"},
		{[]string{"-database-url", "postgres://x/y"}, "-database-url is for -scenario best-available, not seat-map"},
		{[]string{"-sections", "51"}, "-sections × -rows × -row-seats must be at most 100000 seats, not 102000"},
		{[]string{"-duration", "2h"}, "-duration must be"},
	} {
		_, err := parseConfig(append([]string{"-scenario", "seat-map"}, tt.args...), env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := parseConfig([]string{"-book-rate", "5"}, env, io.Discard); err == nil || !strings.Contains(err.Error(), "-book-rate is for -scenario seat-map, not contended") {
		t.Errorf("contended with -book-rate: %v", err)
	}
}
