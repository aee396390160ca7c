package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		want   float64
		ok     bool
	}{
		{"none", nil, 0, false},
		{"one", []float64{7}, 7, true},
		{"odd, unsorted", []float64{9, 1, 5}, 5, true},
		{"even: the mean of the middle two", []float64{6800, 6400, 7000, 6500}, 6650, true},
		{"even, a half", []float64{1, 2}, 1.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := median(tc.values)
			if got != tc.want || ok != tc.ok {
				t.Errorf("median(%v) = %v, %v; want %v, %v", tc.values, got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := worst(nil); ok {
		t.Error("worst of no values gave one")
	}
	if w, _ := worst([]float64{3, 9, 4}); w != 9 {
		t.Errorf("worst = %v, want 9", w)
	}
}

func TestPGFailoverDuration(t *testing.T) {
	for _, tc := range []struct {
		duration, given, want string
	}{
		{"10s", "", "20s"},     // make test's runs: too short to book after the promotion
		{"500ms", "", "20s"},   // any form of duration
		{"20s", "", "20s"},     // just long enough
		{"25s", "", "25s"},     // make rolling-restart's default
		{"1m", "", "1m"},       // kept as written
		{"10s", "15s", "15s"},  // PG_FAILOVER_DURATION is taken as given
		{"soon", "", "soon"},   // not a duration: the hammer says so
		{"1m30s", "", "1m30s"}, // longer, kept
	} {
		if got := pgFailoverDuration(tc.duration, tc.given); got != tc.want {
			t.Errorf("pgFailoverDuration(%q, %q) = %q, want %q", tc.duration, tc.given, got, tc.want)
		}
	}
}

func TestParseFigures(t *testing.T) {
	f := parseFigures("cluster: some log\npromotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2\n")
	if f.PromotedAfterMs == nil || *f.PromotedAfterMs != 7650 || f.RejoinedAfterMs == nil || *f.RejoinedAfterMs != 6100 ||
		f.Leader == nil || *f.Leader != "pg2" {
		t.Errorf("parseFigures = %s, want 7650, 6100, pg2", jsonOf(t, f))
	}
	f = parseFigures("promotedAfterMs=soon leader=")
	if f.PromotedAfterMs != nil || f.RejoinedAfterMs != nil || f.Leader == nil || *f.Leader != "" {
		t.Errorf("parseFigures of no numbers = %s, want promotedAfterMs and rejoinedAfterMs null", jsonOf(t, f))
	}
}

// sampleReport is a pg-failover run's report as bin/hammer -json writes it
// (the fields the drills read, and some they do not).
const sampleReport = `{
  "runId": "x", "sent": 41234, "wallMs": 20012.7, "throughputPerSec": 2060.4,
  "responses": {"200": 40000, "409 seat_taken": 1000, "503 unavailable": 70, "502": 2, "transport error": 1},
  "latencyMs": {"p50": 3.1, "p99": 48.25},
  "allowUnavailable": true, "unavailable": 70, "longestGapMs": 6612.9,
  "seats": {"hammered": 40000, "wonOnce": 40000, "notWon": 0, "wonMoreThanOnce": 0},
  "acknowledged": {"checked": 40000, "found": 40000, "lost": 0, "unchecked": 0},
  "watch": {"target": "x", "booked": 40000, "matched": 39999, "missing": ["1/2"], "resumed": 3, "delayMs": {"p99": 12.5}},
  "verdict": {"pass": false, "reasons": ["2 answers 502", "1 event missing"]}
}`

func writeReport(t *testing.T, report string) *hammerReport {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run-1.json")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := readReport(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunLine(t *testing.T) {
	r := writeReport(t, sampleReport)
	f := parseFigures("promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2")
	got := runLine("pg-failover 1", during("pg-failover", 9, f), r, true)
	want := "pg-failover 1: 41234 requests in 20012 ms (2060 req/s) while the PostgreSQL leader was SIGKILLed " +
		"(pg2 leading 7650 ms after the kill; the killed node, restarted, its synchronous standby 6100 ms later); " +
		"5xx 72 (503 unavailable 70), longest gap without a booking 6612.9 ms, transport errors 1, " +
		"events 39999 of 40000 bookings, missing 1, streams reopened 3, event p99 12.5 ms; p99 48.25 ms; " +
		"verdict FAIL: 2 answers 502; 1 event missing"
	if got != want {
		t.Errorf("runLine =\n%s\nwant\n%s", got, want)
	}
	got = runLine("roll 2", during("roll", 14, figures{}), r, false)
	if !strings.HasPrefix(got, "roll 2: 41234 requests in 20012 ms (2060 req/s) while 3 instances restarted in 14 s; 5xx 72, transport errors 1,") {
		t.Errorf("runLine of a roll = %s", got)
	}
}

func TestRunRowJSONAndTable(t *testing.T) {
	r := writeReport(t, sampleReport)
	row := runRow{Run: 1, figures: parseFigures("promotedAfterMs=7650 rejoinedAfterMs=6100 leader=pg2"),
		counts: countsOf(r), Reasons: r.Verdict.Reasons}
	want := `{"run":1,"promotedAfterMs":7650,"rejoinedAfterMs":6100,"leader":"pg2","longestGapMs":6612,` +
		`"unavailable":70,"other5xx":2,"transportErrors":1,"bookings":40000,"lost":0,"unchecked":0,"seatsTwice":0,` +
		`"eventsMissing":1,"sent":41234,"wallMs":20012,"pass":false,"reasons":["2 answers 502","1 event missing"]}`
	if got := jsonOf(t, row); got != want {
		t.Errorf("JSON line =\n%s\nwant\n%s", got, want)
	}
	noReport := runRow{Run: 2, Reasons: []string{"the hammer gave no report (exit 2)"}}
	want = `{"run":2,"promotedAfterMs":null,"rejoinedAfterMs":null,"leader":null,"pass":false,"reasons":["the hammer gave no report (exit 2)"]}`
	if got := jsonOf(t, noReport); got != want {
		t.Errorf("JSON line without a report =\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ got, want string }{
		{tableHeader, "run  promotedAfterMs  longestGapMs    503s   other 5xx  transport  bookings  lost  seats twice  events missing  verdict"},
		{row.row(), "  1             7650          6612      70           2          1     40000     0            0               1  FAIL"},
		{noReport.row(), "  2                ?             ?       ?           ?          ?         ?     ?            ?               ?  FAIL"},
	} {
		if tc.got != tc.want {
			t.Errorf("row =\n%q\nwant\n%q", tc.got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	lost := 1
	rows := []runRow{
		{Run: 1, figures: figures{PromotedAfterMs: ms(6000)}, counts: &counts{LongestGapMs: 6500, Unavailable: 70, Bookings: 30000, Lost: &lost}, Pass: false},
		{Run: 2, figures: figures{PromotedAfterMs: ms(7000)}, counts: &counts{LongestGapMs: 7200, Unavailable: 64, Bookings: 31000}, Pass: true},
		{Run: 3, figures: figures{PromotedAfterMs: ms(6500)}}, // no report
	}
	want := "longestGapMs: median 6850, worst 7200 over 2 runs; promotedAfterMs: median 6500, worst 7000\n" +
		"totals: 134 503s, 0 other 5xx, 0 transport errors, 61000 bookings, 1 lost, 0 seats twice, 0 events missing; 1 of 3 runs passed"
	if got := summary(rows, 3); got != want {
		t.Errorf("summary =\n%s\nwant\n%s", got, want)
	}
	want = "longestGapMs: median null, worst null over 0 runs; promotedAfterMs: median null, worst null\n" +
		"totals: 0 503s, 0 other 5xx, 0 transport errors, 0 bookings, 0 lost, 0 seats twice, 0 events missing; 0 of 1 runs passed"
	if got := summary([]runRow{{Run: 1}}, 1); got != want {
		t.Errorf("summary of a run without figures =\n%s\nwant\n%s", got, want)
	}
}

func TestPageLine(t *testing.T) {
	var p pageResult
	if err := json.Unmarshal([]byte(`{"pass":true,"bookings":80,"retries":3,"mapSeconds":0.35,"agreeSeconds":1,"stream":{"opens":4,"snapshots":1}}`), &p); err != nil {
		t.Fatal(err)
	}
	want := "the page through HAProxy, 3 instances restarted: 80 bookings made meanwhile, 3 retried; the seat map showed the last " +
		"0.35 s after it was answered, the page 1 s after; its stream opened 4 times, 1 snapshot; PASS"
	if got := p.line(); got != want {
		t.Errorf("page line =\n%s\nwant\n%s", got, want)
	}
}

func TestConfigs(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, n := range []string{"0", "-1", "x", "+3"} {
		if _, err := pgFailoversConfigFrom(env(map[string]string{"N": n})); err == nil || !strings.Contains(err.Error(), "N must be a positive number, not '"+n+"'") {
			t.Errorf("N=%s: %v, want it refused", n, err)
		}
	}
	cfg, err := pgFailoversConfigFrom(env(map[string]string{"FAILOVER_AFTER": "2.5"}))
	if err != nil || cfg.runs != 20 || cfg.duration != "30s" || cfg.after.Seconds() != 2.5 || cfg.timeout.Seconds() != 120 {
		t.Errorf("pg-failovers defaults = %+v, %v", cfg, err)
	}
	r, err := rollingConfigFrom(env(map[string]string{"RUNS": "1", "DURATION": "10s", "PG_SWITCHOVERS": "0"}))
	if err != nil || r.runs != 1 || r.failovers != 1 || r.pgSwitchovers != 0 || r.pgFailovers != 1 || r.pgFailoverDuration != "20s" {
		t.Errorf("rolling config = %+v, %v", r, err)
	}
	if _, err := rollingConfigFrom(env(map[string]string{"FAILOVERS": "one"})); err == nil {
		t.Error("FAILOVERS=one was taken")
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
