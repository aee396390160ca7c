package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// otherWebhooksReport counts the enabled webhook endpoints found on the
// service before the run; More: at least Enabled (more pages).
type otherWebhooksReport struct {
	Enabled int  `json:"enabled"`
	More    bool `json:"more,omitempty"`
}

// report is everything a run measured and concluded; it renders as text or
// JSON.
type report struct {
	RunID          string          `json:"runId"`
	Scenario       scenario        `json:"scenario"`
	Targets        []string        `json:"targets"`
	Schedules      []int64         `json:"schedules"`
	N              int             `json:"n,omitempty"`
	Duration       duration        `json:"durationMs,omitempty"`
	C              int             `json:"c"`
	Users          int             `json:"users"`
	Sent           int             `json:"sent"`
	Wall           duration        `json:"wallMs"`
	Throughput     float64         `json:"throughputPerSec"`
	Responses      map[string]int  `json:"responses"`
	Latency        latency         `json:"latencyMs"`
	Seats          seatTotals      `json:"seats,omitzero"`
	PerSeat        []seatReport    `json:"perSeat,omitempty"`
	SeatMapChecked bool            `json:"seatMapChecked"`
	TransportErrs  []string        `json:"transportErrorSamples,omitempty"`
	Watch          *watchReport    `json:"watch,omitempty"`
	Best           *bestReport     `json:"bestAvailable,omitempty"`
	SeatMap        *seatMapReport  `json:"seatMap,omitempty"`
	OnSale         *onSaleReport   `json:"onSale,omitempty"`
	OnSales        *onSalesReport  `json:"onSales,omitempty"`
	Platform       *platformReport `json:"platform,omitempty"`
	Webhooks       *webhooksReport `json:"webhooks,omitempty"`
	// OtherWebhooks are the endpoints registered before the run, not
	// the hammer's: their deliveries share the machine measured.
	OtherWebhooks *otherWebhooksReport `json:"otherWebhooks,omitempty"`
	// AllowUnavailable is -allow-unavailable; Unavailable counts the
	// bookings answered 503 unavailable.
	AllowUnavailable bool `json:"allowUnavailable,omitempty"`
	Unavailable      int  `json:"unavailable,omitempty"`
	// LongestGap is the longest stretch of the run without a booking
	// answered 200 (from its start to the first, between two, from the
	// last to its end): through a database failover, about how long the
	// service took to book again. Not for hot-seat, which books nothing.
	LongestGap duration `json:"longestGapMs,omitempty"`
	// Acknowledged is the bookings answered 200 read back by their ids,
	// after the seat maps (not with -verify=false).
	Acknowledged *ackReport `json:"acknowledged,omitempty"`
	Verdict      verdict    `json:"verdict"`

	allSeats []seatReport // PerSeat, never cut short: what judge reads
	// targetsJudged: the verdict follows the scenario's targets (they
	// are otherwise only reported).
	targetsJudged bool
	// gapFrom and gapTo are where LongestGap lies, from the run's start.
	gapFrom, gapTo time.Duration
	// stillUnavailable: no answer the scenario expects came after the
	// last 503 unavailable (the run ended with the service down).
	stillUnavailable bool
}

type latency struct {
	P50  duration `json:"p50"`
	P90  duration `json:"p90"`
	P99  duration `json:"p99"`
	P999 duration `json:"p99.9"`
	Max  duration `json:"max"`
}

func (l latency) String() string {
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", l.P50, l.P90, l.P99, l.P999, l.Max)
}

// seatTotals counts the hammered seats by how many requests won them.
type seatTotals struct {
	Hammered int `json:"hammered"`
	WonOnce  int `json:"wonOnce"`
	NotWon   int `json:"notWon"`
	WonTwice int `json:"wonMoreThanOnce"`
}

type seatReport struct {
	seatRef
	Requests int `json:"requests"`
	// OK counts the seat's distinct reservations answered 200; a 200 that
	// repeats one (its owner asking again) counts in OwnersRetries.
	OK            int    `json:"ok"`
	OwnersRetries int    `json:"ownersRetries"`
	Map           string `json:"mapStatus"` // statuses the targets reported, "/"-joined if they differ
	// Unavailable counts its requests answered 503 unavailable.
	Unavailable int `json:"unavailable,omitempty"`
}

// maxPerSeat bounds the per-seat list of a report: a fresh-seats run books
// one seat per request.
const maxPerSeat = maxSeats

// duration marshals as fractional milliseconds, which JSON consumers can
// plot without parsing Go duration strings.
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(d) / float64(time.Millisecond))
}

func (d duration) String() string { return time.Duration(d).Round(10 * time.Microsecond).String() }

// maxErrorSamples bounds how many distinct transport errors are kept to
// explain a failure.
const maxErrorSamples = 3

// appendSamples adds the samples not there yet, up to maxErrorSamples.
func appendSamples(to []string, samples ...string) []string {
	for _, s := range samples {
		if len(to) < maxErrorSamples && !slices.Contains(to, s) {
			to = append(to, s)
		}
	}
	return to
}

// summarize folds the timed phase into a report without a verdict.
func summarize(cfg config, runID string, w *workload, res fired, views []seatMapView) *report {
	r := &report{
		RunID: runID, Scenario: cfg.Scenario, Targets: cfg.Targets, Schedules: w.scheduleIDs(),
		N: cfg.N, Duration: duration(cfg.Duration), C: cfg.C, Users: cfg.Users,
		Wall: duration(res.wall), Responses: map[string]int{}, SeatMapChecked: cfg.Verify, AllowUnavailable: cfg.AllowUnavailable,
	}
	perSeat := map[seatRef]*seatReport{}
	seatOf := func(s seatRef) *seatReport {
		if sr := perSeat[s]; sr != nil {
			return sr
		}
		sr := &seatReport{seatRef: s}
		perSeat[s] = sr
		return sr
	}
	for _, s := range w.fixed {
		seatOf(s)
	}
	type wonReservation struct {
		seat seatRef
		id   string
	}
	answered := map[wonReservation]bool{}
	for _, o := range res.outcomes {
		k := o.key()
		r.Responses[k]++
		if !o.Sent {
			continue
		}
		r.Sent++
		s := seatOf(o.Seat)
		s.Requests++
		if k == keyOK {
			won := wonReservation{o.Seat, o.Reservation}
			if answered[won] {
				s.OwnersRetries++
			} else {
				answered[won] = true
				s.OK++
			}
		}
		if k == keyUnavailable {
			r.Unavailable++
			s.Unavailable++
		}
		if k == keyTransportError {
			r.TransportErrs = appendSamples(r.TransportErrs, o.Err)
		}
	}
	if wantWins(cfg.Scenario) > 0 && !res.began.IsZero() {
		r.LongestGap, r.gapFrom, r.gapTo = longestGap(res.outcomes, res.began, res.wall)
	}
	r.stillUnavailable = endedUnavailable(cfg.Scenario, res.outcomes)
	if res.wall > 0 {
		r.Throughput = float64(r.Sent) / res.wall.Seconds()
	}
	r.Latency = latencyOf(res.latency)

	seats := make([]*seatReport, 0, len(perSeat))
	for _, s := range perSeat {
		s.Map = mapStatus(views, s.seatRef)
		seats = append(seats, s)
		r.Seats.Hammered++
		switch s.OK {
		case 0:
			r.Seats.NotWon++
		case 1:
			r.Seats.WonOnce++
		default:
			r.Seats.WonTwice++
		}
	}
	slices.SortFunc(seats, func(a, b *seatReport) int {
		return cmp.Or(cmp.Compare(a.Schedule, b.Schedule), cmp.Compare(a.Seat, b.Seat))
	})
	for _, s := range seats {
		r.allSeats = append(r.allSeats, *s)
	}
	if len(seats) <= maxPerSeat {
		r.PerSeat = r.allSeats
	}
	return r
}

// longestGap is the longest stretch without a 200 among outcomes of a run
// that began at began and lasted wall, counting from its start and to its
// end, and where that stretch lay (from and to, after began).
func longestGap(outcomes []outcome, began time.Time, wall time.Duration) (gap duration, from, to time.Duration) {
	var booked []time.Duration
	for _, o := range outcomes {
		if o.key() == keyOK {
			booked = append(booked, o.At.Sub(began))
		}
	}
	slices.Sort(booked)
	var prev time.Duration
	for _, at := range append(booked, wall) {
		if at-prev > time.Duration(gap) {
			gap, from, to = duration(at-prev), prev, at
		}
		prev = max(prev, at)
	}
	return gap, from, to
}

// endedUnavailable reports whether the last of outcomes answered 503
// unavailable came after every answer the scenario expects: the service
// had not come back when the run ended.
func endedUnavailable(s scenario, outcomes []outcome) bool {
	var lastUnavailable, lastExpected time.Time
	for _, o := range outcomes {
		switch k := o.key(); {
		case k == keyUnavailable && o.At.After(lastUnavailable):
			lastUnavailable = o.At
		case expected(s, k) && o.At.After(lastExpected):
			lastExpected = o.At
		}
	}
	return !lastUnavailable.IsZero() && !lastExpected.After(lastUnavailable)
}

// mapStatus is what the targets said about seat after the run.
func mapStatus(views []seatMapView, seat seatRef) string {
	var seen []string
	for _, v := range views {
		if v.Schedule != seat.Schedule {
			continue
		}
		st := "error"
		if v.Err == nil {
			var ok bool
			if st, ok = v.Statuses[seat.Seat]; !ok {
				st = "missing"
			}
		}
		if !slices.Contains(seen, st) {
			seen = append(seen, st)
		}
	}
	if len(seen) == 0 {
		return "unchecked"
	}
	return strings.Join(seen, "/")
}

// latencyOf reads the percentiles of a histogram of microseconds.
func latencyOf(h *hdrhistogram.Histogram) latency {
	at := func(q float64) duration {
		return duration(time.Duration(h.ValueAtQuantile(q)) * time.Microsecond)
	}
	return latency{P50: at(50), P90: at(90), P99: at(99), P999: at(99.9),
		Max: duration(time.Duration(h.Max()) * time.Microsecond)}
}
