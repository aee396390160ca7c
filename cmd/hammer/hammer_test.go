package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testEnv(name string) string {
	if name == "AUTH_SECRET" {
		return testSecret
	}
	return ""
}

func mustConfig(tb testing.TB, urls []string, args ...string) config {
	tb.Helper()
	args = append([]string{"-url", strings.Join(urls, ","), "-timeout", "5s"}, args...)
	cfg, err := parseConfig(args, testEnv, io.Discard)
	if err != nil {
		tb.Fatalf("parseConfig(%q): %v", args, err)
	}
	return cfg
}

// textOf is r's text report, logged for the reader of a failing test.
func textOf(tb testing.TB, r *report) string {
	tb.Helper()
	var text bytes.Buffer
	if err := writeText(&text, r); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("report:\n%s", text.String())
	return text.String()
}

// jsonOf decodes r's JSON report into v.
func jsonOf(tb testing.TB, r *report, v any) {
	tb.Helper()
	var js bytes.Buffer
	if err := writeJSON(&js, r); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), v); err != nil {
		tb.Fatalf("%v:\n%s", err, js.String())
	}
}

func mustHammer(tb testing.TB, ctx context.Context, cfg config) *report {
	tb.Helper()
	r, err := hammer(ctx, cfg, nil)
	if err != nil {
		tb.Fatalf("hammer: %v", err)
	}
	return r
}

func assertFailsWith(tb testing.TB, r *report, want string) {
	tb.Helper()
	if r.Verdict.Pass {
		tb.Fatalf("verdict passed, want a failure mentioning %q; responses %v", want, r.Responses)
	}
	for _, reason := range r.Verdict.Reasons {
		if strings.Contains(reason, want) {
			return
		}
	}
	tb.Fatalf("no reason mentions %q: %q", want, r.Verdict.Reasons)
}

func TestHammerPassesAgainstCorrectFake(t *testing.T) {
	for _, client := range []string{clientFast, clientStd} {
		t.Run(client, func(t *testing.T) { testHammerPassesAgainstCorrectFake(t, client) })
	}
}

func testHammerPassesAgainstCorrectFake(t *testing.T, client string) {
	f := newFakeAPI(t)
	urls, counters := f.serve(t, 2)
	cfg := mustConfig(t, urls, "-n", "600", "-c", "60", "-seats", "3", "-users", "600", "-client", client)

	r := mustHammer(t, t.Context(), cfg)

	textOf(t, r)
	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	total := 0
	for _, n := range r.Responses {
		total += n
	}
	if total != 600 || r.Sent != 600 || r.Responses[keyOK] != 3 {
		t.Errorf("responses %v, sent %d: want 600 in all, 600 sent, three 200s", r.Responses, r.Sent)
	}
	for _, s := range r.PerSeat {
		if s.Requests != 200 || s.OK != 1 || s.Map != "reserved" {
			t.Errorf("seat %+v, want 200 requests, one 200, reserved", s)
		}
	}
	if got := f.distinctUsers(); got != 600 {
		t.Errorf("%d distinct users reserved, want 600", got)
	}
	for i, c := range counters {
		if c.get() < 300 {
			t.Errorf("target %d got %d requests, want at least its round-robin share of 300", i, c.get())
		}
	}
}

func TestHammerFailsWhenFakeDoubleBooks(t *testing.T) {
	f := newFakeAPI(t)
	f.doubleBook = true
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "100", "-c", "20"))

	textOf(t, r)
	assertFailsWith(t, r, "seat 1 of schedule 1: 2 successful reservations, want 1")
	if r.Responses[keyOK] != 2 {
		t.Errorf("responses %v, want two 200s", r.Responses)
	}
}

func TestHammerFailsOnServerErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.unavailableEvery = 7
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "100", "-c", "20"))

	assertFailsWith(t, r, "14 5xx responses: 503 unavailable ×14")
}

func TestHammerFailsOnTransportErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.dropEvery = 9
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "100", "-c", "20"))

	assertFailsWith(t, r, "transport errors")
	if r.Responses[keyTransportError] == 0 || len(r.TransportErrs) == 0 {
		t.Errorf("responses %v, samples %q: want transport errors with samples", r.Responses, r.TransportErrs)
	}
}

func TestHammerStopsWhenInterrupted(t *testing.T) {
	f := newFakeAPI(t)
	f.stall = make(chan struct{})
	f.arrived = make(chan struct{}, 100)
	urls, _ := f.serve(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-f.arrived
		cancel()
	}()

	r := mustHammer(t, ctx, mustConfig(t, urls, "-n", "100", "-c", "10"))

	assertFailsWith(t, r, "run interrupted")
	if r.Responses[keyNotSent] == 0 {
		t.Errorf("responses %v, want unsent requests after the interrupt", r.Responses)
	}
}

func TestHammerExistingSchedule(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	id := strconv.FormatInt(f.addSchedule(5, 2), 10)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "50", "-c", "10", "-schedule", id, "-seat", "4"))
	if !r.Verdict.Pass || len(r.PerSeat) != 1 || r.PerSeat[0].Seat != 4 {
		t.Fatalf("verdict %+v, seats %+v: want a pass on seat 4", r.Verdict, r.PerSeat)
	}

	for seat, want := range map[string]string{"2": `seat 2 of schedule 1 is "reserved"`, "9": "schedule 1 has no seat 9"} {
		_, err := hammer(t.Context(), mustConfig(t, urls, "-n", "10", "-schedule", id, "-seat", seat), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("seat %s: error %v, want one containing %q", seat, err, want)
		}
	}
}

func TestRunExitStatus(t *testing.T) {
	good := newFakeAPI(t)
	goodURLs, _ := good.serve(t, 1)
	bad := newFakeAPI(t)
	bad.doubleBook = true
	badURLs, _ := bad.serve(t, 1)
	down := httptest.NewServer(nil)
	down.Close()

	tests := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"pass", []string{"-url", goodURLs[0], "-n", "50", "-c", "10"}, exitPass, "PASS"},
		{"double booking", []string{"-url", badURLs[0], "-n", "50", "-c", "10", "-json"}, exitFail, `"pass": false`},
		{"server down", []string{"-url", down.URL, "-n", "5", "-timeout", "2s"}, exitFail, ""},
		{"bad flag", []string{"-n", "-1"}, exitUsage, ""},
		{"help", []string{"-h"}, exitPass, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(t.Context(), tt.args, testEnv, &stdout, &stderr)
			if got != tt.want {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got, tt.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.out) {
				t.Errorf("stdout lacks %q:\n%s", tt.out, stdout.String())
			}
		})
	}
}

func TestJSONReport(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	var stdout bytes.Buffer
	if code := run(t.Context(), []string{"-url", urls[0], "-n", "20", "-c", "5", "-json"}, testEnv, &stdout, io.Discard); code != exitPass {
		t.Fatalf("exit %d:\n%s", code, stdout.String())
	}
	var got struct {
		N         int                `json:"n"`
		Responses map[string]int     `json:"responses"`
		Latency   map[string]float64 `json:"latencyMs"`
		PerSeat   []seatReport       `json:"perSeat"`
		Verdict   verdict            `json:"verdict"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	if got.N != 20 || got.Responses[keyOK] != 1 || !got.Verdict.Pass || len(got.PerSeat) != 1 || got.Latency["max"] <= 0 {
		t.Errorf("unexpected report: %+v", got)
	}
}

// hot-seat books the seat before the clock starts; every timed request is
// refused, and the report says how truthfully.
func TestHotSeat(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 2)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "hot-seat", "-n", "300", "-c", "30"))

	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	if r.Responses[keySeatTaken] != 300 || r.Responses[keyOK] != 0 || r.Seats.Hammered != 1 || r.PerSeat[0].Map != "reserved" {
		t.Errorf("responses %v, seats %+v: want 300 seat_taken on one reserved seat", r.Responses, r.PerSeat)
	}

	// A service that lets a second booking through fails the hot seat.
	bad := newFakeAPI(t)
	bad.doubleBook = true
	badURLs, _ := bad.serve(t, 1)
	r = mustHammer(t, t.Context(), mustConfig(t, badURLs, "-scenario", "hot-seat", "-n", "50", "-c", "5"))
	assertFailsWith(t, r, "1 successful reservations, want 0")
}

// fresh-seats gives every request a seat of its own, over as many
// schedules as it takes.
func TestFreshSeats(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-n", "2500", "-c", "50"))

	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	if r.Responses[keyOK] != 2500 || r.Seats.WonOnce != 2500 || len(r.Schedules) != 2 || r.PerSeat != nil {
		t.Errorf("responses %v, seats %+v, schedules %v, %d per-seat lines: want 2500 seats won once in 2 schedules, no per-seat list",
			r.Responses, r.Seats, r.Schedules, len(r.PerSeat))
	}
}

// An instance shows another instance's booking when its seat event
// arrives, a moment after the answer (seconds while a Redis failover
// settles): the seat maps are read again until they show every booking
// answered 200, for mapSettleTime at most.
func TestHammerLetsTheSeatMapSettle(t *testing.T) {
	f := newFakeAPI(t)
	f.mapLag = 700 * time.Millisecond
	urls, _ := f.serve(t, 2)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-n", "400", "-c", "20"))

	if !r.Verdict.Pass {
		t.Fatalf("verdict failed on a seat map %s behind: %q", f.mapLag, r.Verdict.Reasons)
	}
}

// A seat map that still does not show a booking mapSettleTime after the
// run fails the verdict.
func TestHammerFailsASeatMapThatNeverShowsABooking(t *testing.T) {
	f := newFakeAPI(t)
	f.mapLag = time.Hour
	urls, _ := f.serve(t, 1)

	began := time.Now()
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-n", "50", "-c", "5"))

	assertFailsWith(t, r, `is "available", want reserved`)
	if took := time.Since(began); took < mapSettleTime {
		t.Errorf("the run and its read-back took %s, less than mapSettleTime (%s): the map was not read again", took, mapSettleTime)
	}
}

// -duration runs until the time is up, whatever the count; fresh seats are
// made as they are needed.
func TestDurationMode(t *testing.T) {
	f := newFakeAPI(t)
	f.hold = 0
	urls, _ := f.serve(t, 1)
	for _, scenario := range []string{"hot-seat", "fresh-seats", "contended"} {
		start := time.Now()
		r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", scenario, "-duration", "300ms", "-c", "8"))
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("%s: run took %v, want at least the 300ms asked for", scenario, took)
		}
		if !r.Verdict.Pass || r.Sent == 0 || r.N != 0 {
			t.Errorf("%s: verdict %+v, %d sent: want a pass with requests", scenario, r.Verdict, r.Sent)
		}
	}
}

// -verify=false drives a target without a seat map (the plain baseline),
// judging from the answers alone, and says so.
func TestWithoutSeatMap(t *testing.T) {
	f := newFakeAPI(t)
	f.noSeatMap = true
	urls, _ := f.serve(t, 1)

	if _, err := hammer(t.Context(), mustConfig(t, urls, "-n", "20"), nil); err == nil {
		t.Fatal("hammer with the seat-map check against a target without one: no error")
	}
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "200", "-c", "20", "-seats", "4", "-verify=false"))
	if !r.Verdict.Pass || r.SeatMapChecked || r.Seats.WonOnce != 4 {
		t.Fatalf("verdict %+v, checked %v, seats %+v: want a pass from the answers", r.Verdict, r.SeatMapChecked, r.Seats)
	}
	text := textOf(t, r)
	if !strings.Contains(text, "not checked (-verify=false)") {
		t.Errorf("report does not say the seat map was not checked:\n%s", text)
	}
}
