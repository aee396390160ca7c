package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// The on-sale end to end against two instances of the real service: 30
// buyers join over 2 s, 9 or so before the opening, and are admitted 10 a
// second in line order; the 20 seats sell out to the first of them, the
// rest are refused not_enough_seats and leave; the two sampled buyers'
// holds without Admission are refused.
func TestOnSaleAgainstTheService(t *testing.T) {
	urls := serveService(t, 2)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "on-sale", "-rows", "2", "-row-seats", "10", "-quantity", "1-6",
		"-users", "30", "-join-window", "2s", "-prequeue-share", "0.3", "-admit-rate", "10", "-c", "8", "-duration", "40s"))
	text := textOf(t, r)
	or := r.OnSale
	if !r.Verdict.Pass || or == nil {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	if or.Users != 30 || or.Joins != 30 || or.Prequeue == 0 || or.Prequeue == 30 || or.ServerErrors != 0 || or.Polls < 30 {
		t.Errorf("joins: %d users, %d joins, %d pre-queue, %d 5xx, %d polls", or.Users, or.Joins, or.Prequeue, or.ServerErrors, or.Polls)
	}
	if or.Admitted != 30 || or.Once.ServiceAdmitted != 30 || or.Once.SharedTickets != 0 || or.Once.Rejoins != 2 || or.Once.RejoinedElsewhere != 0 {
		t.Errorf("admissions: %d seen, %+v", or.Admitted, or.Once)
	}
	if or.TimeToAdmission.P50 <= 0 || or.TimeToAdmission.P99 < or.TimeToAdmission.P50 || or.JoinLatency.P99 <= 0 {
		t.Errorf("time to admission %+v, join latency %+v", or.TimeToAdmission, or.JoinLatency)
	}
	if or.Order.Inversions != 0 || or.Order.Compared == 0 {
		t.Errorf("order %+v: want tickets compared, none out of order", or.Order)
	}
	if or.Unadmitted != 2 || or.Refused != 2 {
		t.Errorf("%d of %d holds without Admission refused, want 2 of 2", or.Refused, or.Unadmitted)
	}
	// Everyone is admitted in some 3 s: within the first 10 s window or two,
	// never faster than the rate (and the target's slack, for the clocks).
	admitted := 0
	for _, w := range or.Windows {
		admitted += w.Admitted
	}
	if len(or.Windows) == 0 || len(or.Windows) > 2 || admitted != 30 || busiestWindow(or.Windows) > 11 {
		t.Errorf("windows %+v", or.Windows)
	}
	if or.SeatsSold != 20 || !or.SoldOut || or.SellOut <= 0 || or.SeatMap.Reserved != 20 || or.SeatMap.Held != 0 || or.Holds == 0 {
		t.Errorf("sold %d (sold out %v in %s) in %d holds; seat map %+v", or.SeatsSold, or.SoldOut, or.SellOut, or.Holds, or.SeatMap)
	}
	if or.Ends[endBought]+or.Ends[endSoldOut] != 30 || or.Ends[endBought] != or.Holds || or.Ends[endSoldOut] == 0 {
		t.Errorf("ends %v", or.Ends)
	}
	if r.Responses["403 admission_required (hold without admission)"] != 2 || r.Responses["204 (leave)"] != 30 || r.Responses["201 (join)"] != 30 {
		t.Errorf("responses %v", r.Responses)
	}
	for _, want := range []string{"joins:", "time to admission p50", "admissions/s:", "0 inversions", "2 of 2 holds refused", "sold:", "estimates:", "PASS"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	var got struct {
		OnSale struct {
			Joins     int `json:"joins"`
			SeatsSold int `json:"seatsSold"`
			Order     struct {
				Inversions *int `json:"inversions"`
			} `json:"order"`
		} `json:"onSale"`
	}
	jsonOf(t, r, &got)
	if got.OnSale.Joins != 30 || got.OnSale.SeatsSold != 20 || got.OnSale.Order.Inversions == nil {
		t.Errorf("JSON report: %+v", got)
	}
}

// An on-sale that does not sell out, end to end against the real
// service: six buyers of one or two seats each, joining over a second, on
// a venue of 20 seats. Every one of them buys; the report says the venue
// was not sold out and when the last buyer was done, some time after the
// opening (the last joins 0.83 s after the first, 0.53 s after the
// opening), never 0 s.
func TestOnSaleThatDoesNotSellOut(t *testing.T) {
	urls := serveService(t, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "on-sale", "-rows", "2", "-row-seats", "10", "-quantity", "1-2",
		"-users", "6", "-join-window", "1s", "-prequeue-share", "0.3", "-admit-rate", "10", "-c", "4", "-duration", "30s"))
	text := textOf(t, r)
	or := r.OnSale
	if !r.Verdict.Pass || or == nil {
		t.Fatalf("verdict %+v", r.Verdict)
	}
	if or.Joins != 6 || or.Admitted != 6 || or.Ends[endBought] != 6 || or.Holds != 6 {
		t.Errorf("%d joins, %d admitted, ends %v, %d holds: want all six buyers served", or.Joins, or.Admitted, or.Ends, or.Holds)
	}
	if or.SoldOut || or.SeatsSold < 6 || or.SeatsSold > 12 || or.Capacity != 20 ||
		or.SeatMap.Reserved != or.SeatsSold || or.SeatMap.Held != 0 || or.SeatMap.Available != 20-or.SeatsSold {
		t.Errorf("sold %d of %d (sold out %v); seat map %+v: want 6 to 12 seats sold, the rest available", or.SeatsSold, or.Capacity, or.SoldOut, or.SeatMap)
	}
	if last := time.Duration(or.SellOut); last < 500*time.Millisecond || last > time.Duration(or.Wall) {
		t.Errorf("every buyer done %s after the opening, the sale lasting %s: want the last buyer's end, at least 0.5 s", last, or.Wall)
	}
	want := fmt.Sprintf("%d of 20 seats in 6 holds; not sold out: every buyer done %s after the opening", or.SeatsSold, or.SellOut)
	if !strings.Contains(text, want) {
		t.Errorf("the text report lacks %q", want)
	}
	var got struct {
		OnSale struct {
			SoldOut   bool    `json:"soldOut"`
			SellOutMs float64 `json:"sellOutMs"`
		} `json:"onSale"`
	}
	got.OnSale.SoldOut = true // the report must say false
	jsonOf(t, r, &got)
	if got.OnSale.SoldOut || got.OnSale.SellOutMs < 500 {
		t.Errorf("JSON report: %+v; want soldOut false and sellOutMs at least 500", got.OnSale)
	}
}

// checkOrder counts a ticket admitted while one seen ahead of it was seen
// still in line later, and nothing the polling's granularity explains.
func TestCheckOrder(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// A at position 1, B at 2, both seen at the opening.
	a := lineSighting{Position: 1, Sent: at(0), At: at(10), InLine: at(1100), Admitted: at(1500)}
	b := lineSighting{Position: 2, Sent: at(20), At: at(30), InLine: at(30), Admitted: at(1000)}
	if c := checkOrder([]lineSighting{a, b}); c.Inversions != 1 || c.Compared != 1 || time.Duration(c.Lead) != 100*time.Millisecond {
		t.Errorf("B's admission seen at 1.0 s, A found in line by a poll sent at 1.1 s: %+v, want 1 inversion by 100ms", c)
	}
	// A's last poll in line went out before B's admission was seen: A may
	// have been admitted first, its admission seen late.
	a.InLine = at(950)
	b.Admitted = at(960)
	if c := checkOrder([]lineSighting{a, b}); c.Inversions != 0 || c.Compared != 1 {
		t.Errorf("within A's polling interval: %+v, want none", c)
	}
	// Seen the other way round (B's sighting answered before A's request
	// went out), the positions prove nothing.
	a = lineSighting{Position: 1, Sent: at(100), At: at(110), InLine: at(2000), Admitted: at(2500)}
	b = lineSighting{Position: 2, Sent: at(0), At: at(50), InLine: at(50), Admitted: at(1000)}
	if c := checkOrder([]lineSighting{a, b}); c.Inversions != 0 || c.Compared != 0 {
		t.Errorf("not comparable: %+v", c)
	}
	// Every pre-queue ticket is ahead of every later one, seen waiting or
	// not.
	pre := lineSighting{Prequeue: true, InLine: at(3000), Admitted: at(3500)}
	late := lineSighting{Admitted: at(2000), InLine: at(1500)}
	if c := checkOrder([]lineSighting{pre, late}); c.Inversions != 1 || time.Duration(c.Lead) != time.Second {
		t.Errorf("a later joiner admitted before the pre-queue: %+v", c)
	}
}

// An estimate is weighed against the middle of the interval the admission
// came in; admissions a second are counted per 10 s from the opening, the
// last window over the time it lasted.
func TestOnSaleFigures(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	estimated := func(seconds float64) *queueCall {
		return &queueCall{outcome: outcome{At: t0}, Ticket: ticketOut{EstimatedWaitSeconds: &seconds}}
	}
	b := buyerRun{FirstWaiting: estimated(20), LastNotAdmitted: t0.Add(18 * time.Second), AdmittedSeen: t0.Add(22 * time.Second)}
	if ratio, ok := estimateRatio(b); !ok || ratio != 1 {
		t.Errorf("admitted between 18 s and 22 s of an estimate of 20 s: %v, %v; want 1", ratio, ok)
	}
	b.FirstWaiting = estimated(9)
	if _, ok := estimateRatio(b); ok {
		t.Error("an estimate of 9 s weighed")
	}
	if e := estimatesOf([]float64{0.5, 0.9, 1.1, 1.15, 2}); e.Weighed != 5 || e.RatioP50 != 1.1 || e.WithinBand != 0.6 {
		t.Errorf("estimates %+v", e)
	}
	var runs []buyerRun
	for _, s := range []int{1, 2, 9, 11, 15} {
		runs = append(runs, buyerRun{AdmittedSeen: t0.Add(time.Duration(s) * time.Second)}, buyerRun{})
	}
	w := admissionWindows(runs, t0)
	if len(w) != 2 || w[0].Admitted != 3 || w[0].PerSec != 0.3 || w[0].Partial || w[1].Admitted != 2 || !w[1].Partial || w[1].PerSec != 0.4 {
		t.Errorf("windows %+v", w)
	}
	if busiestWindow(w) != 0.3 {
		t.Errorf("busiest %v, want the whole window's", busiestWindow(w))
	}
}

// The verdict fails an inversion, a ticket admitted twice (the queue
// counting more admissions than were seen) and a hold without Admission
// that was let through.
func TestJudgeOnSale(t *testing.T) {
	good := func() *report {
		return &report{Responses: map[string]int{"201 (join)": 2, "200 (poll)": 5, "201 (hold)": 1, "409 not_enough_seats (hold)": 1,
			"200 (confirm)": 1, "204 (leave)": 2, "403 admission_required (hold without admission)": 1},
			OnSale: &onSaleReport{Users: 2, Joins: 2, Admitted: 2, Once: onceReport{ServiceAdmitted: 2}, Unadmitted: 1, Refused: 1,
				SeatsSold: 3, Capacity: 3, SeatMap: seatMapCount{Reserved: 3}, Ends: map[string]int{endBought: 1, endSoldOut: 1}}}
	}
	if v := judgeOnSale(good(), false); !v.Pass {
		t.Fatalf("a good sale: %+v", v)
	}
	r := good()
	r.OnSale.Order.Inversions = 1
	assertFailsWith(t, withVerdict(r), "1 tickets admitted while a ticket ahead of them was still in line")
	r = good()
	r.OnSale.Once.ServiceAdmitted = 3
	assertFailsWith(t, withVerdict(r), "the queue counts 3 admissions, the buyers saw 2")
	r = good()
	r.OnSale.Refused = 0
	r.Responses["201 (hold without admission)"] = 1
	assertFailsWith(t, withVerdict(r), "1 of 1 holds without Admission were not refused")
	r = good()
	r.Responses["503 unavailable (poll)"] = 1
	assertFailsWith(t, withVerdict(r), "1 5xx responses")
}

func withVerdict(r *report) *report {
	r.Verdict = judgeOnSale(r, false)
	return r
}

func TestParseConfigOnSale(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-scenario", "on-sale"}, env, io.Discard)
	o := cfg.OnSale
	if err != nil || o.AdmitRate != 50 || o.MaxActive != 0 || o.JoinWindow != 10*time.Second || o.PrequeueShare != 0.3 ||
		o.MinQuantity != 1 || o.MaxQuantity != 6 || o.capacity() != 2000 || cfg.Users != 100 || cfg.Duration != 10*time.Second+4*time.Second+time.Minute {
		t.Errorf("defaults: %+v, users %d, duration %s, %v", o, cfg.Users, cfg.Duration, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "on-sale", "-sections", "100", "-rows", "20", "-row-seats", "40", "-users", "20000",
		"-join-window", "1m", "-admit-rate", "500", "-max-active", "2000", "-prequeue-share", "0"}, env, io.Discard)
	if o := cfg.OnSale; err != nil || o.capacity() != 80_000 || o.AdmitRate != 500 || o.MaxActive != 2000 || o.PrequeueShare != 0 ||
		cfg.Duration != time.Minute+80*time.Second+time.Minute {
		t.Errorf("stadium: %+v, %s, %v", o, cfg.Duration, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "100"}, "-n is for -scenario hot-seat, fresh-seats or contended, not on-sale"},
		{[]string{"-schedule", "3", "-seat", "1"}, "-schedule is for -scenario hot-seat, contended or seat-map, not on-sale"},
		{[]string{"-watch"}, "-watch is for -scenario fresh-seats, contended or best-available, not on-sale"},
		{[]string{"-admit-rate", "0"}, "-admit-rate must be 1..10000"},
		{[]string{"-admit-rate", "10001"}, "-admit-rate must be 1..10000"},
		{[]string{"-max-active", "-1"}, "-max-active must be 0..1000000"},
		{[]string{"-join-window", "0s"}, "-join-window must be positive"},
		{[]string{"-prequeue-share", "1.5"}, "-prequeue-share must be 0..1"},
		{[]string{"-quantity", "0-3"}, "-quantity must be"},
		{[]string{"-book-rate", "5"}, "-book-rate is for -scenario seat-map, not on-sale"},
	} {
		_, err := parseConfig(append([]string{"-scenario", "on-sale"}, tt.args...), env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := parseConfig([]string{"-admit-rate", "5"}, env, io.Discard); err == nil || !strings.Contains(err.Error(), "-admit-rate is for -scenario on-sale or on-sales, not contended") {
		t.Errorf("contended with -admit-rate: %v", err)
	}
}

// A buyer's run says when the buyer was done, whichever way the run ends:
// the report's "every buyer done … after the opening" of a sale that did
// not sell out is the latest of them.
func TestBuyRecordsWhenTheBuyerIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := &sale{start: time.Now().Add(time.Hour)}
	before := time.Now()
	b := s.buy(ctx, 0, 1, user{id: "buyer"})
	if b.End != endNotAdmitted || b.Done.Before(before) || b.Done.After(time.Now()) {
		t.Fatalf("ended %q, done at %v; want not admitted, done between %v and now", b.End, b.Done, before)
	}
}
