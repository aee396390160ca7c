package main

import (
	"errors"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	reserved := []seatMapView{{Target: "http://a", Schedule: 1, Statuses: map[int]string{1: "reserved"}}}
	clean := func() map[string]int { return map[string]int{"200": 1, "409 seat_locked": 90, "409 seat_taken": 9} }
	with := func(k string, n int) map[string]int {
		m := clean()
		m[k] += n
		return m
	}
	tests := []struct {
		name      string
		responses map[string]int
		ok        int // 200s on seat 1
		views     []seatMapView
		want      string // "" means pass
	}{
		{"one 200 passes", clean(), 1, reserved, ""},
		{"two 200s fail", with("200", 1), 2, reserved, "seat 1 of schedule 1: 2 successful reservations"},
		{"no 200 fails", with("200", -1), 0, reserved, "seat 1 of schedule 1: 0 successful reservations"},
		{"a 5xx fails", with("503 unavailable", 1), 1, reserved, "1 5xx responses: 503 unavailable ×1"},
		{"a 500 without code fails", with("500", 2), 1, reserved, "2 5xx responses: 500 ×2"},
		{"a transport error fails", with("transport error", 1), 1, reserved, "1 transport errors"},
		{"another 4xx fails", with("401 unauthorized", 3), 1, reserved, "3 unexpected responses for contended"},
		{"a 409 with another code fails", with("409 conflict", 1), 1, reserved, "unexpected responses"},
		{"a 200 with a wrong body fails", with("200 unexpected body", 1), 1, reserved, "200 unexpected body ×1"},
		{"interrupted fails", with("not sent", 5), 1, nil, "run interrupted: 5 requests"},
		{"seat map says available", clean(), 1,
			[]seatMapView{{Target: "http://a", Schedule: 1, Statuses: map[int]string{1: "available"}}}, `says seat 1 of schedule 1 is "available"`},
		{"one target disagrees", clean(), 1,
			append(reserved, seatMapView{Target: "http://b", Schedule: 1, Statuses: map[int]string{1: "available"}}), `via http://b says seat 1`},
		{"seat missing from the map", clean(), 1,
			[]seatMapView{{Target: "http://a", Schedule: 1, Statuses: map[int]string{2: "reserved"}}}, "has no seat 1"},
		{"seat map unreadable", clean(), 1,
			[]seatMapView{{Target: "http://a", Schedule: 1, Err: errors.New("get seat map: HTTP 503")}}, "seat map of schedule 1 via http://a: get seat map"},
		{"seat map never read", clean(), 1, nil, "seat map was not read back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &report{Scenario: scenarioContended, N: 100, Responses: tt.responses, SeatMapChecked: true,
				allSeats: []seatReport{{seatRef: seatRef{Schedule: 1, Seat: 1}, OK: tt.ok}}, TransportErrs: []string{"connection refused"}}
			v := judge(r, tt.views)
			if tt.want == "" {
				if !v.Pass || len(v.Reasons) > 0 {
					t.Fatalf("verdict %+v, want a pass", v)
				}
				return
			}
			if v.Pass {
				t.Fatalf("verdict passed, want a failure mentioning %q", tt.want)
			}
			if !strings.Contains(strings.Join(v.Reasons, "\n"), tt.want) {
				t.Errorf("reasons %q lack %q", v.Reasons, tt.want)
			}
		})
	}
}

func TestJudgeCapsReasons(t *testing.T) {
	r := &report{Scenario: scenarioContended, N: 100, Responses: map[string]int{}, SeatMapChecked: true}
	statuses := map[int]string{}
	for s := 1; s <= 50; s++ {
		r.allSeats = append(r.allSeats, seatReport{seatRef: seatRef{Schedule: 1, Seat: s}})
		statuses[s] = "reserved"
	}
	v := judge(r, []seatMapView{{Target: "http://a", Schedule: 1, Statuses: statuses}})
	if len(v.Reasons) != maxReasons+1 || v.Reasons[maxReasons] != "... and 30 more" {
		t.Errorf("got %d reasons ending %q", len(v.Reasons), v.Reasons[len(v.Reasons)-1])
	}
}

// Each scenario expects its own answers: a hot seat never books, a fresh
// seat always does.
func TestJudgeByScenario(t *testing.T) {
	seat := []seatReport{{seatRef: seatRef{Schedule: 1, Seat: 1}, Requests: 1}}
	tests := []struct {
		name      string
		scenario  scenario
		responses map[string]int
		ok        int
		want      string
	}{
		{"hot seat refused passes", scenarioHotSeat, map[string]int{"409 seat_taken": 90, "409 seat_locked": 10}, 0, ""},
		{"hot seat booked fails", scenarioHotSeat, map[string]int{"200": 1, "409 seat_taken": 99}, 1, "want 0"},
		{"fresh seat booked passes", scenarioFreshSeats, map[string]int{"200": 1}, 1, ""},
		{"fresh seat refused fails", scenarioFreshSeats, map[string]int{"409 seat_taken": 1}, 0, "unexpected responses for fresh-seats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seat[0]
			s.OK = tt.ok
			r := &report{Scenario: tt.scenario, Responses: tt.responses, allSeats: []seatReport{s}}
			v := judge(r, nil)
			if got := strings.Join(v.Reasons, "\n"); v.Pass != (tt.want == "") || !strings.Contains(got, tt.want) {
				t.Errorf("verdict %+v, want pass=%v mentioning %q", v, tt.want == "", tt.want)
			}
		})
	}
}

func TestSortedKeys(t *testing.T) {
	got := sortedKeys(map[string]int{"transport error": 1, "503 unavailable": 1, "409 seat_taken": 1, "200": 1, "409 seat_locked": 1, "not sent": 1})
	want := []string{"200", "409 seat_locked", "409 seat_taken", "503 unavailable", "not sent", "transport error"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sortedKeys = %q, want %q", got, want)
	}
}
