package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A hand-made venue: rows A (5 seats) and B (4 seats), seats 1..9.
func testVenue() venue {
	v := venue{ID: 7, SeatCount: 9}
	v.Layout.Rows = []venueRow{{Label: "A", Seats: 5, Category: "vip", FirstSeat: 1}, {Label: "B", Seats: 4, Category: "standard", FirstSeat: 6}}
	return v
}

// mapOf makes a seat map from one letter a seat: a(vailable), h(eld),
// r(eserved).
func mapOf(seats string) map[int]string {
	names := map[rune]string{'a': "available", 'h': "held", 'r': "reserved"}
	statuses := map[int]string{}
	for i, c := range seats {
		statuses[i+1] = names[c]
	}
	return statuses
}

// A stranded single seat is free with both neighbours in its row taken or
// the row's end; the end of one row is not next to the start of the next.
func TestStrandedSingles(t *testing.T) {
	v := testVenue()
	tests := []struct {
		seats string // A1..A5 then B1..B4
		want  int
	}{
		{"aaaaa" + "aaaa", 0},
		{"hhhhh" + "hhhh", 0},
		{"ahaha" + "hhhh", 3},     // A1 (row's start), A3, A5 (row's end)
		{"hhhha" + "ahhh", 2},     // A5 and B1 touch in seat ids, not in the hall
		{"haahh" + "hhha", 1},     // A2-A3 are a pair; B4 alone at the end
		{"hhrha" + "harh", 2},     // reserved is taken too: A5, B2
		{"aaaaa" + "haha", 2},     // B2, B4
		{"hhhhh" + "aaah", 0},     // a run of three
		{"hahhh" + "hhah", 2},     // A2, B3
		{"hhhhh" + "hhha", 1},     // B4
		{"ahhhh" + "hhhh", 1},     // A1
		{"hhhhh" + "hahh", 1},     // B2
		{"aahaa" + "hhhh", 0},     // pairs
		{"hhhhh" + "ahha", 2},     // both ends of B
		{"hahah" + "ahah", 4},     // every other seat
		{"haaah" + "hhhh", 0},     // a run of three in the middle
		{"hhhah" + "hhhh", 1},     // A4
		{"hhhhh" + "hhah", 1},     // B3
		{"ahaaa" + "aaha", 2},     // A1, B4
		{"rrrrr" + "rrra", 1},     // B4 among reservations
		{"hhhhh" + "hhhh"[:3], 0}, // B4 missing from the map: not free
	}
	for _, tt := range tests {
		if got := strandedSingles(v, mapOf(tt.seats)); got != tt.want {
			t.Errorf("strandedSingles(%s|%s) = %d, want %d", tt.seats[:5], tt.seats[5:], got, tt.want)
		}
	}
}

// The venue is sold out for a quantity when no row has that many
// available seats in a row (adjacent), or fewer than that are available
// (not adjacent), of the category asked.
func TestRoom(t *testing.T) {
	v := testVenue()
	tests := []struct {
		seats    string
		quantity int
		category string
		adjacent bool
		want     bool
	}{
		{"hhhhh" + "hhhh", 1, "", true, false},
		{"hhhha" + "hhhh", 1, "", true, true},
		{"hhhha" + "ahhh", 2, "", true, false}, // A5 and B1 are not side by side
		{"hhhha" + "ahhh", 2, "", false, true},
		{"haaah" + "hhhh", 3, "", true, true},
		{"haaah" + "hhhh", 4, "", true, false},
		{"haaah" + "hhhh", 3, "standard", true, false},
		{"hhhhh" + "aaah", 3, "standard", true, true},
		{"hhhhh" + "aaah", 3, "vip", false, false},
	}
	for _, tt := range tests {
		if got := room(v, mapOf(tt.seats), tt.quantity, tt.category, tt.adjacent); got != tt.want {
			t.Errorf("room(%s|%s, %d, %q, adjacent %v) = %v, want %v", tt.seats[:5], tt.seats[5:], tt.quantity, tt.category, tt.adjacent, got, tt.want)
		}
	}
}

func held(hold string, quantity int, seats ...int) holdOutcome {
	return holdOutcome{outcome: outcome{Sent: true, Status: 201}, Hold: hold, Quantity: quantity, Seats: seats}
}

// checkHolds finds a seat in two holds, a hold that is not consecutive
// seats of one row, a seat of another category and one outside the venue;
// refused requests do not count.
func TestCheckHolds(t *testing.T) {
	v := testVenue()
	refused := holdOutcome{outcome: outcome{Sent: true, Status: 409, Code: codeNotEnough}, Quantity: 3, Available: 2}
	good := []holdOutcome{held("h1", 2, 1, 2), held("h2", 3, 3, 4, 5), held("h3", 2, 7, 8), refused}
	if inv := checkHolds(v, good, true, ""); inv.Holds != 3 || inv.Seats != 7 || inv.SeatsInTwoHolds+inv.NotAdjacent+inv.WrongCategory+inv.NotInVenue != 0 {
		t.Errorf("good holds: %+v", inv)
	}

	inv := checkHolds(v, append(slices.Clone(good), held("h4", 2, 2, 3)), true, "")
	if inv.SeatsInTwoHolds != 2 || len(inv.Examples[faultTwoHolds]) != 2 || inv.Examples[faultTwoHolds][0] != "seat 2 is in hold h1 and hold h4" {
		t.Errorf("seats 2 and 3 held twice: %+v", inv)
	}
	inv = checkHolds(v, []holdOutcome{held("h1", 2, 5, 6), held("h2", 2, 8, 9), held("h3", 2, 1, 3)}, true, "")
	if inv.NotAdjacent != 2 || !strings.Contains(strings.Join(inv.Examples[faultNotAdjacent], "\n"), "[A5 B1]") {
		t.Errorf("A5+B1 and A1+A3 are not adjacent: %+v", inv)
	}
	if inv := checkHolds(v, []holdOutcome{held("h1", 2, 5, 6)}, false, ""); inv.NotAdjacent != 0 {
		t.Errorf("without adjacent, seats anywhere pass: %+v", inv)
	}
	inv = checkHolds(v, []holdOutcome{held("h1", 2, 1, 2), held("h2", 2, 6, 7)}, true, "vip")
	if inv.WrongCategory != 1 {
		t.Errorf("B1-B2 are not vip: %+v", inv)
	}
	inv = checkHolds(v, []holdOutcome{held("h1", 2, 9, 10)}, true, "")
	if inv.NotInVenue != 1 {
		t.Errorf("seat 10 is not of the venue: %+v", inv)
	}
}

// A seat map agrees with the holds when exactly their seats are held.
func TestCheckMap(t *testing.T) {
	v := testVenue()
	holds := []holdOutcome{held("h1", 2, 1, 2), held("h2", 2, 6, 7)}
	if c := checkMap("http://a", v, holds, mapOf("hhaaa"+"hhaa"), nil); c.Held != 4 || c.Available != 5 || c.HeldNotGranted+c.GrantedNotHeld+c.Missing+c.Reserved != 0 {
		t.Errorf("agreeing map: %+v", c)
	}
	c := checkMap("http://a", v, holds, mapOf("hahha"+"rhaa"), nil)
	if c.HeldNotGranted != 2 || c.GrantedNotHeld != 2 || c.Reserved != 1 || c.StrandedSingles != 2 {
		t.Errorf("A3, A4 held without a hold, A2 and B1 granted but not held (B1 reserved), A2 and A5 stranded: %+v", c)
	}
	if c := checkMap("http://a", v, holds, nil, errors.New("boom")); c.Error != "boom" {
		t.Errorf("unreadable map: %+v", c)
	}
}

// Quantities are drawn from the range by the seed, the same whichever
// worker sends which request; the explicit blocks cover the venue once.
func TestQuantitiesAndBlocks(t *testing.T) {
	b := bestConfig{venueConfig: venueConfig{Rows: 40, RowSeats: 50}, MinQuantity: 1, MaxQuantity: 6, Seed: 1}
	seen := map[int]int{}
	for i := range 6000 {
		q := b.quantityOf(i)
		if q != b.quantityOf(i) {
			t.Fatal("quantityOf is not a function of the request")
		}
		seen[q]++
	}
	for q := 1; q <= 6; q++ {
		if seen[q] < 800 || seen[q] > 1200 {
			t.Errorf("quantity %d drawn %d times of 6000, want about 1000", q, seen[q])
		}
	}
	if len(seen) != 6 {
		t.Errorf("quantities drawn: %v, want 1..6", seen)
	}
	other := b
	other.Seed = 2
	same := 0
	for i := range 100 {
		if other.quantityOf(i) == b.quantityOf(i) {
			same++
		}
	}
	if same > 40 {
		t.Errorf("seeds 1 and 2 agree on %d of 100 quantities", same)
	}

	v := venue{ID: 1, SeatCount: 2000}
	for i, r := range b.layout().Rows {
		v.Layout.Rows = append(v.Layout.Rows, venueRow{Label: r.Label, Seats: r.Seats, FirstSeat: 1 + i*50})
	}
	if got := []string{v.Layout.Rows[0].Label, v.Layout.Rows[25].Label, v.Layout.Rows[26].Label, v.Layout.Rows[39].Label}; !slices.Equal(got, []string{"A", "Z", "AA", "AN"}) {
		t.Errorf("row labels %q", got)
	}
	rowOf := seatRows(v)
	covered := map[int]bool{}
	blocks := b.explicitBlocks(v)
	for _, blk := range blocks {
		if len(blk) < 1 || len(blk) > 6 || !oneRun(blk, rowOf) {
			t.Fatalf("block %v: want 1..6 consecutive seats of one row", blk)
		}
		for _, s := range blk {
			if covered[s] {
				t.Fatalf("seat %d in two blocks", s)
			}
			covered[s] = true
		}
	}
	if len(covered) != 2000 || slices.IsSortedFunc(blocks, func(a, b []int) int { return a[0] - b[0] }) {
		t.Errorf("%d seats covered, want 2000, by shuffled blocks", len(covered))
	}
}

func TestParseConfigBestAvailable(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-scenario", "best-available"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := bestConfig{venueConfig: venueConfig{Rows: 40, RowSeats: 50}, MinQuantity: 1, MaxQuantity: 6, Adjacent: true, Seed: 1}
	if cfg.Best != want || cfg.N != 0 || cfg.Duration != defaultPhaseTime || cfg.C != 64 || cfg.Users != 200 {
		t.Errorf("defaults: %+v, best %+v; want %+v, no -n, a %s phase limit, 200 users (10 holds a user a phase)", cfg, cfg.Best, want, defaultPhaseTime)
	}
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-rows", "10", "-row-seats", "20", "-quantity", "2-4",
		"-category", "vip", "-adjacent=false", "-seed", "9", "-duration", "30s", "-users", "2000"}, env, io.Discard)
	want = bestConfig{venueConfig: venueConfig{Rows: 10, RowSeats: 20, Category: "vip"}, MinQuantity: 2, MaxQuantity: 4, Seed: 9}
	if err != nil || cfg.Best != want || cfg.Duration != 30*time.Second || cfg.Users != 2000 {
		t.Errorf("flags: %+v, %v; want best %+v", cfg.Best, err, want)
	}
	cfg, err = parseConfig(nil, envOf(map[string]string{"AUTH_SECRET": testSecret, "HAMMER_SCENARIO": "best-available",
		"HAMMER_ROWS": "5", "HAMMER_ROW_SEATS": "8", "HAMMER_QUANTITY": "3", "HAMMER_ADJACENT": "false", "HAMMER_SEED": "4",
		"HAMMER_CATEGORY": "balcony"}), io.Discard)
	want = bestConfig{venueConfig: venueConfig{Rows: 5, RowSeats: 8, Category: "balcony"}, MinQuantity: 3, MaxQuantity: 3, Seed: 4}
	if err != nil || cfg.Best != want || cfg.Users != 100 {
		t.Errorf("env: %+v, %v; want best %+v and 100 users", cfg.Best, err, want)
	}

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-rows", "0"}, "-rows must be 1..100"},
		{[]string{"-rows", "101"}, "-rows must be 1..100"},
		{[]string{"-row-seats", "0"}, "-row-seats must be"},
		{[]string{"-rows", "41"}, "at most 2000 seats, not 2050"},
		{[]string{"-quantity", "0-3"}, "-quantity must be"},
		{[]string{"-quantity", "1-11"}, "-quantity must be"},
		{[]string{"-quantity", "5-2"}, "-quantity must be"},
		{[]string{"-quantity", "two"}, "-quantity must be"},
		{[]string{"-quantity", "1-"}, "-quantity must be"},
		{[]string{"-rows", "100", "-row-seats", "5", "-quantity", "2-6"}, "6 adjacent seats do not fit in a row of 5"},
		{[]string{"-category", "no spaces"}, `-category "no spaces"`},
		{[]string{"-category", strings.Repeat("x", 33)}, "-category"},
		{[]string{"-n", "100"}, "-n is for -scenario hot-seat, fresh-seats or contended, not best-available"},
		{[]string{"-seats", "3"}, "-seats is for -scenario contended, not best-available"},
		{[]string{"-schedule", "1", "-seat", "1"}, "-schedule is for -scenario hot-seat, contended or seat-map, not best-available"},
		{[]string{"-duration", "2h"}, "-duration must be"},
	}
	for _, tt := range tests {
		_, err := parseConfig(append([]string{"-scenario", "best-available"}, tt.args...), env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	// The venue's flags are not contended's.
	if _, err := parseConfig([]string{"-scenario", "contended", "-rows", "3", "-quantity", "2"}, env, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-rows is for -scenario best-available, seat-map, on-sale or on-sales, not contended") {
		t.Errorf("contended with -rows: %v", err)
	}
	if cfg, err := parseConfig([]string{"-scenario", "best-available", "-duration", "0"}, env, io.Discard); err != nil || cfg.Duration != defaultPhaseTime {
		t.Errorf("-duration 0: %s, %v; want the default, %s", cfg.Duration, err, defaultPhaseTime)
	}
	// -row-seats 5 fits parties of 6 when they need not sit together.
	if _, err := parseConfig([]string{"-scenario", "best-available", "-row-seats", "5", "-adjacent=false"}, env, io.Discard); err != nil {
		t.Errorf("-adjacent=false with rows shorter than the largest party: %v", err)
	}
}

// Against a correct fake every best-available hold takes one attempt, the
// venue sells out, the explicit phase holds every block, and the report
// says so in text and JSON.
func TestBestAvailablePassesAgainstCorrectFake(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 2)
	cfg := mustConfig(t, urls, "-scenario", "best-available", "-rows", "10", "-row-seats", "20", "-quantity", "1-6", "-c", "8")

	r := mustHammer(t, t.Context(), cfg)

	text := textOf(t, r)
	if !r.Verdict.Pass {
		t.Fatalf("verdict failed: %q", r.Verdict.Reasons)
	}
	b := r.Best
	if b.Best.StoppedBy != stopSoldOut || b.SeatsSold != 200 || b.SoldShare != 1 || b.StrandedSingles != 0 || b.FreeSeats != 0 {
		t.Errorf("best available: %+v, sold %d (%v), %d stranded of %d free; want sold out, all 200 seats",
			b.Best, b.SeatsSold, b.SoldShare, b.StrandedSingles, b.FreeSeats)
	}
	if b.Best.Attempts == nil || b.Best.Attempts.Mean != 1 || b.Best.Attempts.Max != 1 || b.Best.Attempts.Counts[1] != b.Best.Holds {
		t.Errorf("attempts %+v, want one for each of %d holds", b.Best.Attempts, b.Best.Holds)
	}
	if b.Best.Responses[keyNotEnough] == 0 || b.Best.SoldOut == nil || b.Best.SoldOut.Checks == 0 {
		t.Errorf("responses %v, sold-out checks %+v: want refusals and a check that saw the venue sold out", b.Best.Responses, b.Best.SoldOut)
	}
	if b.Explicit.StoppedBy != stopAllSent || b.Explicit.SeatsHeld != 200 || b.Explicit.Holds != b.Explicit.Requests || b.HoldsRatio <= 0 {
		t.Errorf("explicit: %+v, ratio %v; want every block held", b.Explicit, b.HoldsRatio)
	}
	for _, m := range slices.Concat(b.Best.Invariant.Maps, b.Explicit.Invariant.Maps) {
		if m.Held != 200 || m.HeldNotGranted+m.GrantedNotHeld != 0 {
			t.Errorf("seat map %+v, want 200 held as granted", m)
		}
	}
	if len(b.Targets) != 5 || !b.Targets[0].Met || !b.Targets[1].Met || !b.Targets[3].Met {
		t.Errorf("targets %+v: sold, stranded and attempts should be met", b.Targets)
	}
	for _, want := range []string{"best available:", "explicit seats:", "sold:", "attempts:", "seats sold when requests stop succeeding", ">= 98% of capacity", "PASS"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}

	var got struct {
		Scenario string `json:"scenario"`
		Best     struct {
			Capacity   int     `json:"capacity"`
			SeatsSold  int     `json:"seatsSold"`
			HoldsRatio float64 `json:"holdsPerSecRatio"`
			Best       struct {
				HoldsPerSec float64            `json:"holdsPerSec"`
				HoldLatency map[string]float64 `json:"holdLatencyMs"`
				Attempts    struct {
					Mean float64 `json:"mean"`
				} `json:"attempts"`
			} `json:"best"`
			Targets []target `json:"targets"`
		} `json:"bestAvailable"`
		Seats   *seatTotals `json:"seats"`
		Verdict verdict     `json:"verdict"`
	}
	jsonOf(t, r, &got)
	if got.Scenario != "best-available" || got.Best.Capacity != 200 || got.Best.SeatsSold != 200 || got.Best.HoldsRatio <= 0 ||
		got.Best.Best.HoldsPerSec <= 0 || got.Best.Best.HoldLatency["p99"] <= 0 || got.Best.Best.Attempts.Mean != 1 ||
		len(got.Best.Targets) != 5 || got.Seats != nil || !got.Verdict.Pass {
		t.Errorf("JSON report: %+v", got)
	}
}

// The verdict catches a seat granted to two holds.
func TestBestAvailableFailsWhenASeatIsHeldTwice(t *testing.T) {
	f := newFakeAPI(t)
	f.holdTwice = true
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "5", "-row-seats", "10", "-c", "4"))

	assertFailsWith(t, r, "best-available phase: 1 seats in two granted holds (e.g. seat 1 is in hold")
	if r.Best.Explicit.Invariant.SeatsInTwoHolds != 0 {
		t.Errorf("the explicit phase's holds are disjoint: %+v", r.Best.Explicit.Invariant)
	}
}

// The verdict catches a hold of seats that are not side by side when
// adjacent seats were asked for, and lets them pass when they were not.
func TestBestAvailableFailsOnScatteredHolds(t *testing.T) {
	f := newFakeAPI(t)
	f.scatter = true
	urls, _ := f.serve(t, 1)

	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "5", "-row-seats", "10", "-quantity", "2-3", "-c", "4"))
	assertFailsWith(t, r, "holds not consecutive in one row though adjacent seats were asked")

	r = mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "5", "-row-seats", "10", "-quantity", "2-3", "-c", "4", "-adjacent=false"))
	if !r.Verdict.Pass {
		t.Errorf("scattered seats without adjacent: %q", r.Verdict.Reasons)
	}
}

// A phase that cannot sell its venue out within -duration fails, and the
// exit status says so.
func TestBestAvailableTimeLimit(t *testing.T) {
	f := newFakeAPI(t)
	f.contendAll = true
	urls, _ := f.serve(t, 1)
	var stdout bytes.Buffer
	code := run(t.Context(), []string{"-url", urls[0], "-scenario", "best-available", "-rows", "2", "-row-seats", "10", "-c", "2",
		"-duration", "300ms"}, testEnv, &stdout, io.Discard)
	if code != exitFail || !strings.Contains(stdout.String(), "best-available phase: ended by the time limit, not sold out (0 of 20 seats held)") {
		t.Errorf("exit %d, want %d with the time limit named:\n%s", code, exitFail, stdout.String())
	}
	if !strings.Contains(stdout.String(), "409 seats_contended") || strings.Contains(stdout.String(), "explicit phase:") {
		t.Errorf("want the contended answers counted and the explicit phase passing:\n%s", stdout.String())
	}
}

// A venue of sections: 101 (rows A and B of 3 seats) and 102 (row A of 3
// seats), seats 1..9.
func testSectionedVenue() venue {
	v := venue{ID: 8, SeatCount: 9}
	v.Layout.Sections = []venueSection{
		{Name: "101", Category: "standard", Rows: []venueRow{{Label: "A", Seats: 3, Category: "standard", FirstSeat: 1}, {Label: "B", Seats: 3, Category: "standard", FirstSeat: 4}}},
		{Name: "102", Category: "vip", Rows: []venueRow{{Label: "A", Seats: 3, Category: "vip", FirstSeat: 7}}},
	}
	return v
}

// In a venue of sections a row ends where it ends, whichever section comes
// next: stranded seats, room and adjacency are counted within a row.
func TestSectionedVenue(t *testing.T) {
	v := testSectionedVenue()
	if err := v.check(nil); err != nil {
		t.Fatalf("check: %v", err)
	}
	rows := v.rows()
	if len(rows) != 3 || rows[1].Section != "101" || rows[2].Section != "102" || rows[2].FirstSeat != 7 {
		t.Fatalf("rows %+v", rows)
	}
	for _, tt := range []struct {
		seats string // 101-A1..3, 101-B1..3, 102-A1..3
		want  int
	}{
		{"aaa" + "aaa" + "aaa", 0},
		{"hha" + "ahh" + "hhh", 2}, // 101-A3 and 101-B1 are in two rows
		{"hhh" + "hha" + "ahh", 2}, // 101-B3 and 102-A1 are in two sections
		{"aha" + "hhh" + "hah", 3},
		{"hhh" + "haa" + "hhh", 0},
	} {
		if got := strandedSingles(v, mapOf(tt.seats)); got != tt.want {
			t.Errorf("strandedSingles(%s) = %d, want %d", tt.seats, got, tt.want)
		}
	}
	if room(v, mapOf("hhh"+"hha"+"ahh"), 2, "", true) || !room(v, mapOf("hhh"+"hha"+"ahh"), 2, "", false) {
		t.Error("101-B3 and 102-A1 are no pair of adjacent seats, but two free seats")
	}
	if !room(v, mapOf("hhh"+"hhh"+"aah"), 2, "vip", true) || room(v, mapOf("aaa"+"hhh"+"hhh"), 2, "vip", true) {
		t.Error("room for two vip seats is in section 102 only")
	}
	inv := checkHolds(v, []holdOutcome{held("h1", 2, 6, 7), held("h2", 2, 8, 9)}, true, "")
	if inv.NotAdjacent != 1 || !strings.Contains(inv.Examples[faultNotAdjacent][0], "[101-B3 102-A1]") {
		t.Errorf("101-B3 + 102-A1 are not adjacent: %+v", inv)
	}
	want := layoutIn{Sections: []layoutSectionIn{{Name: "101", Rows: make([]layoutRowIn, 2)}, {Name: "102", Rows: make([]layoutRowIn, 1)}}}
	if err := v.check(&want); err != nil {
		t.Errorf("check against its own shape: %v", err)
	}
	want.Sections[1].Name = "103"
	if err := v.check(&want); err == nil || !strings.Contains(err.Error(), `"102" of 1 rows, want "103"`) {
		t.Errorf("check against another section: %v", err)
	}
	v.Layout.Sections[1].Rows[0].FirstSeat = 8
	if err := v.check(nil); err == nil || !strings.Contains(err.Error(), `row "102-A" starts at seat 8`) {
		t.Errorf("check of a gap in the numbering: %v", err)
	}
}

// writeFile writes data to a file of the test's own and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// -sections lays the venue out in sections of -rows × -row-seats within
// the API's limits; -layout takes any layout the API takes from a file.
func TestParseConfigVenueOfSections(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-scenario", "best-available", "-sections", "100", "-rows", "20", "-row-seats", "40",
		"-quantity", "1-6", "-users", "2000", "-c", "64"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Best.layout()
	if cfg.Best.capacity() != 80_000 || len(l.Sections) != 100 || l.Sections[0].Name != "101" || l.Sections[99].Name != "200" ||
		len(l.Sections[99].Rows) != 20 || l.Sections[99].Rows[19].Label != "T" || l.Sections[99].Rows[19].Seats != 40 || cfg.Users != 2000 {
		t.Errorf("stadium: capacity %d, %d sections, users %d", cfg.Best.capacity(), len(l.Sections), cfg.Users)
	}
	if got := cfg.Best.describe(); got != "100 sections × 20 rows × 40 seats = 80000 seats" {
		t.Errorf("describe: %q", got)
	}
	// Without -users, enough users that none needs more than 10 holds in a phase.
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-sections", "100", "-rows", "20", "-row-seats", "40"}, env, io.Discard)
	if err != nil || cfg.Users != 8000 {
		t.Errorf("default users of an 80,000-seat venue: %d, %v; want 8000", cfg.Users, err)
	}

	rows := writeFile(t, "rows.json", `{"rows": [{"label": "A", "seats": 8, "category": "vip"}, {"label": "B", "seats": 12}]}`)
	sections := writeFile(t, "sections.json", `{"sections": [{"name": "North", "category": "vip", "rows": [{"label": "A", "seats": 30}]},
		{"name": "South", "rows": [{"label": "A", "seats": 4}, {"label": "B", "seats": 5000, "category": "cheap"}]}]}`)
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-layout", sections, "-category", "vip", "-quantity", "2-8"}, env, io.Discard)
	if err != nil || cfg.Best.capacity() != 5034 || !cfg.Best.layout().sectioned() || cfg.Best.Category != "vip" {
		t.Errorf("-layout of sections: %+v, %v", cfg.Best, err)
	}
	if got := cfg.Best.describe(); got != "layout "+sections+": 2 sections, 3 rows, 5034 seats, category vip" {
		t.Errorf("describe: %q", got)
	}
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-layout", rows, "-quantity", "1-10"}, env, io.Discard)
	if err != nil || cfg.Best.capacity() != 20 || cfg.Best.layout().sectioned() {
		t.Errorf("-layout of rows: %+v, %v", cfg.Best, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-sections", "501", "-rows", "1", "-row-seats", "1"}, "-sections must be 0..500"},
		{[]string{"-sections", "-1"}, "-sections must be 0..500"},
		{[]string{"-sections", "100"}, "-sections × -rows × -row-seats must be at most 100000 seats, not 200000"},
		{[]string{"-sections", "2", "-rows", "101"}, "-rows must be 1..100"},
		{[]string{"-sections", "2", "-rows", "1", "-row-seats", "100001"}, "-row-seats must be 1..100000"},
		{[]string{"-rows", "1", "-row-seats", "2001"}, "-row-seats must be 1..2000"},
		{[]string{"-rows", "41"}, "lay a larger venue out in -sections"},
		{[]string{"-layout", rows, "-rows", "3"}, "-layout excludes -rows, -row-seats and -sections"},
		{[]string{"-layout", rows, "-sections", "3"}, "-layout excludes"},
		{[]string{"-layout", filepath.Join(t.TempDir(), "none.json")}, "no such file"},
		{[]string{"-layout", writeFile(t, "bad.json", `{"rows": [`)}, "not a layout"},
		{[]string{"-layout", writeFile(t, "unknown.json", `{"rows": [{"label": "A", "seats": 2, "price": 9}]}`)}, `unknown field "price"`},
		{[]string{"-layout", writeFile(t, "both.json", `{"rows": [], "sections": []}`)}, "not both"},
		{[]string{"-layout", writeFile(t, "neither.json", `{}`)}, `needs "rows" or "sections"`},
		{[]string{"-layout", writeFile(t, "dup.json", `{"sections": [{"name": "A1", "rows": [{"label": "A", "seats": 2}]}, {"name": "a1", "rows": [{"label": "A", "seats": 2}]}]}`)},
			"layout.sections[1].name"},
		{[]string{"-layout", writeFile(t, "hall.json", `{"rows": [{"label": "A", "seats": 2001}]}`)}, "at most 2000 seats, not 2001"},
		{[]string{"-layout", writeFile(t, "big.json", `{"sections": [{"name": "A", "rows": [{"label": "A", "seats": 100001}]}]}`)}, "layout.sections[0].rows[0].seats"},
		{[]string{"-layout", rows, "-category", "balcony"}, `-category "balcony": the layout of ` + rows + ` has no row of that category`},
		{[]string{"-layout", rows, "-category", "vip", "-quantity", "2-10"}, "10 adjacent seats do not fit in the longest row of " + rows + ", category vip (8 seats)"},
	} {
		_, err := parseConfig(append([]string{"-scenario", "best-available"}, tt.args...), env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := parseConfig([]string{"-scenario", "contended", "-sections", "3"}, env, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "-sections is for -scenario best-available, seat-map, on-sale or on-sales, not contended") {
		t.Errorf("contended with -sections: %v", err)
	}
}

// An instance shows another's holds when their seat events arrive: each
// phase's seat maps are read again until they show every seat granted
// held, for mapSettleTime at most.
func TestBestAvailableLetsTheSeatMapSettle(t *testing.T) {
	f := newFakeAPI(t)
	f.mapLag = 700 * time.Millisecond
	urls, _ := f.serve(t, 2)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-rows", "5", "-row-seats", "10", "-c", "4"))
	if !r.Verdict.Pass || r.Best.SeatsSold != 50 {
		t.Fatalf("verdict %q, %d seats sold, on seat maps %s behind: want a pass, all 50 sold", r.Verdict.Reasons, r.Best.SeatsSold, f.mapLag)
	}
}

// The scenario sells a venue of sections out, the explicit phase holds
// every block of every section, and the report names the sections.
func TestBestAvailableOnSections(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 2)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-sections", "3", "-rows", "4", "-row-seats", "10",
		"-quantity", "1-4", "-c", "8"))
	text := textOf(t, r)
	b := r.Best
	if !r.Verdict.Pass || b.Capacity != 120 || b.SeatsSold != 120 || b.StrandedSingles != 0 || b.Explicit.SeatsHeld != 120 {
		t.Fatalf("verdict %+v; capacity %d, sold %d, stranded %d, explicit %d", r.Verdict, b.Capacity, b.SeatsSold, b.StrandedSingles, b.Explicit.SeatsHeld)
	}
	if !strings.Contains(text, "3 sections × 4 rows × 10 seats = 120 seats; schedules") {
		t.Errorf("the report does not describe the venue")
	}
	for _, at := range [][]wireSize{b.SeatMapBytes.Start, b.SeatMapBytes.End} {
		if len(at) != 2 || at[0].FormSeen != formCompact || at[1].FormSeen != formFull || at[0].Encoding != "gzip" ||
			at[0].Bytes == 0 || at[0].Bytes >= at[1].Bytes || at[0].Decoded >= at[1].Decoded {
			t.Errorf("seat map bytes %+v: want the compact form's and the full form's, gzip-compressed", at)
		}
	}
	if !strings.Contains(text, "seat map, end:") || !strings.Contains(text, "B gzip (") {
		t.Errorf("the report lacks the seat map's bytes")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.schedules[r.Schedules[0]]
	if !s.sectioned || len(s.rows) != 12 || s.rows[11].Section != "103" {
		t.Errorf("the fake's venue: %+v", s.rows)
	}
}

// -watch follows the best-available venue's stream in the form asked, and
// every seat of every 201 has its "held" event; the reading-only -streams
// last the phase.
func TestBestAvailableWatched(t *testing.T) {
	for _, tt := range []struct {
		form, want string
		fullOnly   bool
	}{{formFull, formFull, false}, {formCompact, formCompact, false}, {formCompact, formFull, true}} {
		f := newFakeAPI(t)
		f.fullOnly = tt.fullOnly
		urls, _ := f.serve(t, 2)
		r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "best-available", "-sections", "2", "-rows", "5", "-row-seats", "10",
			"-quantity", "1-4", "-c", "8", "-watch", "-streams", "2", "-form", tt.form))
		text := textOf(t, r)
		w := r.Watch
		if !r.Verdict.Pass || w == nil || w.Status != "held" || w.Booked != 100 || w.Matched != 100 || len(w.Missing) != 0 ||
			w.Form != tt.form || w.SnapshotForm != tt.want || w.SnapshotBytes == 0 || w.Streams != 2 || w.Dropped != 0 || w.Target != urls[1] {
			t.Errorf("-form %s (full only %v): verdict %+v, watch %+v\n%s", tt.form, tt.fullOnly, r.Verdict, w, text)
		}
		for _, want := range []string{"100 of 100 held seats seen as events", "snapshot:", "asked " + tt.form + "; first one " + tt.want + " form"} {
			if !strings.Contains(text, want) {
				t.Errorf("-form %s: the report lacks %q:\n%s", tt.form, want, text)
			}
		}
	}
}

// -form is full or compact, for the live seat map's clients.
func TestParseConfigForm(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-watch", "-form", "compact"}, env, io.Discard)
	if err != nil || cfg.Form != formCompact || !cfg.Watch {
		t.Errorf("-watch -form compact: %+v, %v", cfg, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "best-available", "-streams", "3"}, env, io.Discard)
	if err != nil || cfg.Form != formFull || !cfg.Watch || cfg.Streams != 3 {
		t.Errorf("best-available -streams 3: %+v, %v; want watched in the full form", cfg, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-watch", "-form", "tiny"}, "-form must be full or compact"},
		{[]string{"-form", "compact"}, "-form is for the live seat map's clients"},
	} {
		_, err := parseConfig(tt.args, env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}
