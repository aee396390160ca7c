package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// outageFake is a fake whose database fails over: 503 unavailable to
// everything but the seat stream already open, from 300 ms after the
// first booking for 600 ms.
// gapSlack is how much shorter than the outage the longest gap may be: a
// gap runs between the answers' arrivals, and the last booking before the
// outage may have been answered a little after the outage began.
const gapSlack = 100 * time.Millisecond

func outageFake(t *testing.T) (*fakeAPI, []string) {
	f := newFakeAPI(t)
	f.outageAfter, f.outageFor = 300*time.Millisecond, 600*time.Millisecond
	urls, _ := f.serve(t, 1)
	return f, urls
}

// A run through a failover passes with -allow-unavailable: the 503s are
// counted, the workers go on after them, the schedules and streams it
// makes meanwhile wait for the service, every booking answered 200 reads
// back and has its event, and the longest gap between two 200s covers
// the outage.
func TestAllowUnavailableThroughAnOutage(t *testing.T) {
	f, urls := outageFake(t)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-duration", "1500ms", "-c", "8", "-watch", "-allow-unavailable"))

	text := textOf(t, r)
	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	if r.Unavailable == 0 || r.Unavailable != r.Responses[keyUnavailable] {
		t.Errorf("%d unavailable, responses %v: want the 503s counted", r.Unavailable, r.Responses)
	}
	if gap := time.Duration(r.LongestGap); gap < f.outageFor-gapSlack || gap > f.outageFor+time.Second {
		t.Errorf("longest gap %s, want the outage's %s and at most a second more (the workers pause %s at most)", gap, f.outageFor, maxUnavailablePause)
	}
	if r.gapFrom > f.outageAfter+500*time.Millisecond || r.gapTo < f.outageAfter+f.outageFor {
		t.Errorf("longest gap from %s to %s, want it over the outage (%s to %s)", r.gapFrom, r.gapTo, f.outageAfter, f.outageAfter+f.outageFor)
	}
	a := r.Acknowledged
	if a == nil || a.Checked != r.Responses[keyOK] || a.Found != a.Checked || a.Checked == 0 {
		t.Errorf("read back %+v, want every one of the %d 200s found", a, r.Responses[keyOK])
	}
	if r.Watch == nil || r.Watch.Booked != r.Responses[keyOK] || len(r.Watch.Missing) > 0 {
		t.Errorf("watch %+v, want every booking's event", r.Watch)
	}
	for _, want := range []string{"unavailable:", "allowed (-allow-unavailable)", "longest gap:", "read back:"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	var out bytes.Buffer
	if err := writeJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Allowed      bool      `json:"allowUnavailable"`
		Unavailable  int       `json:"unavailable"`
		LongestGap   float64   `json:"longestGapMs"`
		Acknowledged ackReport `json:"acknowledged"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Allowed || got.Unavailable != r.Unavailable || got.LongestGap < float64((600*time.Millisecond-gapSlack)/time.Millisecond) || got.Acknowledged.Found != a.Found {
		t.Errorf("JSON report %+v, want it to carry the flag, the 503s, the gap in ms and the bookings read back", got)
	}
}

// Without -allow-unavailable the same run fails on the 503s (and still
// gets its report: the schedules it makes wait for the service).
func TestOutageFailsWithoutAllowUnavailable(t *testing.T) {
	_, urls := outageFake(t)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-duration", "1500ms", "-c", "8"))

	// Before the seats refused, however many (the reasons are cut at
	// maxReasons).
	assertFailsWith(t, r, "5xx responses: 503 unavailable")
	assertFailsWith(t, r, "0 successful reservations, want 1")
	if r.AllowUnavailable || r.Unavailable == 0 || time.Duration(r.LongestGap) < 600*time.Millisecond-gapSlack {
		t.Errorf("allowed %v, %d unavailable, longest gap %s: want not allowed, 503s and a gap over the outage",
			r.AllowUnavailable, r.Unavailable, r.LongestGap)
	}
}

// -allow-unavailable lets only 503 unavailable through: a 500 still fails.
func TestAllowUnavailableStillFailsOn500(t *testing.T) {
	f, urls := outageFake(t)
	f.internalEvery = 50

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-seats", "20", "-duration", "1500ms", "-c", "8", "-allow-unavailable"))

	assertFailsWith(t, r, "5xx responses: 500 internal")
	if r.Unavailable == 0 {
		t.Errorf("responses %v, want 503s too", r.Responses)
	}
	for _, reason := range r.Verdict.Reasons {
		if strings.Contains(reason, "503") {
			t.Errorf("reason %q: the 503s are allowed", reason)
		}
	}
}

// A run that ends while the service is still unavailable fails, however
// many 503s are allowed.
func TestAllowUnavailableFailsARunThatEndsDown(t *testing.T) {
	f := newFakeAPI(t)
	f.outageAfter, f.outageFor = 200*time.Millisecond, time.Hour
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-duration", "700ms", "-c", "8", "-allow-unavailable", "-verify=false"))

	assertFailsWith(t, r, "the run ended unavailable")
}

// The reads after the run ask again what is answered 503: a verification
// right after a failover waits for the service.
func TestVerificationWaitsOutUnavailable(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	f.refuseReads = 4 // the seat map, then the reservations

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-n", "200", "-c", "8"))

	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	if f.refuseReads != 0 || r.Acknowledged == nil || r.Acknowledged.Found != 200 {
		t.Errorf("%d refusals left, read back %+v: want all 4 served and the 200 bookings found", f.refuseReads, r.Acknowledged)
	}
}

// The schedules fresh-seats makes as it goes and the streams -watch opens
// for them are asked again while answered 503.
func TestSetUpWaitsOutUnavailable(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	f.refuseSetup = 5

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "fresh-seats", "-duration", "300ms", "-c", "4", "-watch"))

	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	if f.refuseSetup != 0 || r.Watch.Booked == 0 || r.Watch.Matched != r.Watch.Booked {
		t.Errorf("%d refusals left, watch %+v: want all 5 served and every booking watched", f.refuseSetup, r.Watch)
	}
}

// A booking answered 200 that the service then does not know is lost,
// even though its seat shows reserved.
func TestLostBookingFails(t *testing.T) {
	f := newFakeAPI(t)
	f.loseEvery = 7
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-n", "400", "-c", "8", "-seats", "20"))

	assertFailsWith(t, r, "of 20 bookings answered 200, 2 lost")
	if r.Seats.WonOnce != 20 || r.Acknowledged.Lost != 2 || r.Acknowledged.Found != 18 {
		t.Errorf("seats %+v, read back %+v: want 20 won once, 2 lost, 18 found", r.Seats, r.Acknowledged)
	}
}

func TestLongestGap(t *testing.T) {
	began := time.Now()
	at := func(ms int, status int, code string) outcome {
		return outcome{Sent: true, Status: status, Code: code, At: began.Add(time.Duration(ms) * time.Millisecond)}
	}
	tests := []struct {
		name           string
		outcomes       []outcome
		wall           time.Duration
		gap, from, end time.Duration
	}{
		{"none booked: the whole run", []outcome{at(5, 503, "unavailable")}, time.Second, time.Second, 0, time.Second},
		{"from the start", []outcome{at(400, 200, ""), at(500, 200, "")}, 600 * time.Millisecond,
			400 * time.Millisecond, 0, 400 * time.Millisecond},
		{"between two, out of order", []outcome{at(900, 200, ""), at(10, 200, ""), at(500, 503, "unavailable"), at(20, 200, "")}, time.Second,
			880 * time.Millisecond, 20 * time.Millisecond, 900 * time.Millisecond},
		{"to the end", []outcome{at(10, 200, ""), at(20, 409, "seat_taken")}, time.Second,
			990 * time.Millisecond, 10 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gap, from, to := longestGap(tt.outcomes, began, tt.wall)
			if time.Duration(gap) != tt.gap || from != tt.from || to != tt.end {
				t.Errorf("longestGap = %s from %s to %s, want %s from %s to %s", gap, from, to, tt.gap, tt.from, tt.end)
			}
		})
	}
}

func TestJudgeAllowUnavailable(t *testing.T) {
	seat := func(ok, unavailable int) seatReport {
		return seatReport{seatRef: seatRef{Schedule: 1, Seat: 1}, Requests: ok + unavailable + 1, OK: ok, Unavailable: unavailable}
	}
	mapSays := func(st string) []seatMapView {
		return []seatMapView{{Target: "http://a", Schedule: 1, Statuses: map[int]string{1: st}}}
	}
	tests := []struct {
		name      string
		allow     bool
		responses map[string]int
		seat      seatReport
		views     []seatMapView
		ended     bool // the run ended unavailable
		want      string
	}{
		{"a 503 unavailable passes", true, map[string]int{"200": 1, "503 unavailable": 3}, seat(1, 3), mapSays("reserved"), false, ""},
		{"not without the flag", false, map[string]int{"200": 1, "503 unavailable": 3}, seat(1, 3), mapSays("reserved"), false, "3 5xx responses: 503 unavailable ×3"},
		{"a 503 of no code still fails", true, map[string]int{"200": 1, "503": 1}, seat(1, 0), mapSays("reserved"), false, "1 5xx responses: 503 ×1"},
		{"a seat refused, left free", true, map[string]int{"503 unavailable": 1}, seat(0, 1), mapSays("available"), false, ""},
		{"a seat refused, booked after all", true, map[string]int{"503 unavailable": 1}, seat(0, 1), mapSays("reserved"), false, ""},
		{"a seat refused but held", true, map[string]int{"503 unavailable": 1}, seat(0, 1), mapSays("held"), false, `is "held"`},
		{"a seat never refused must be won", true, map[string]int{"409 seat_taken": 1}, seat(0, 0), mapSays("reserved"), false, "0 successful reservations"},
		{"a run that ends unavailable", true, map[string]int{"200": 1, "503 unavailable": 1}, seat(1, 1), mapSays("reserved"), true, "the run ended unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{Scenario: scenarioContended, Responses: tt.responses, SeatMapChecked: true, AllowUnavailable: tt.allow,
				Unavailable: tt.responses[keyUnavailable], allSeats: []seatReport{tt.seat}, stillUnavailable: tt.ended}
			v := judge(r, tt.views)
			switch {
			case tt.want == "" && !v.Pass:
				t.Fatalf("verdict %+v, want a pass", v)
			case tt.want != "" && !strings.Contains(strings.Join(v.Reasons, "\n"), tt.want):
				t.Errorf("reasons %q lack %q", v.Reasons, tt.want)
			}
		})
	}
}
