package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"
)

// report is everything a run measured and concluded; it renders as text or
// JSON.
type report struct {
	RunID           string         `json:"runId"`
	Targets         []string       `json:"targets"`
	ScheduleID      int64          `json:"scheduleId"`
	N               int            `json:"n"`
	C               int            `json:"c"`
	Seats           []int          `json:"seats"`
	Sent            int            `json:"sent"`
	Wall            duration       `json:"wallMs"`
	Throughput      float64        `json:"throughputPerSec"`
	Responses       map[string]int `json:"responses"`
	Latency         latency        `json:"latencyMs"`
	PerSeat         []seatReport   `json:"perSeat"`
	TransportErrors []string       `json:"transportErrorSamples,omitempty"`
	Verdict         verdict        `json:"verdict"`
}

type latency struct {
	P50 duration `json:"p50"`
	P90 duration `json:"p90"`
	P99 duration `json:"p99"`
	Max duration `json:"max"`
}

type seatReport struct {
	Seat     int    `json:"seatId"`
	Requests int    `json:"requests"`
	OK       int    `json:"ok"`
	Map      string `json:"mapStatus"` // statuses the targets reported, "/"-joined if they differ
}

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

// summarize folds the outcomes into a report without a verdict.
func summarize(cfg config, runID string, scheduleID int64, outcomes []outcome, wall time.Duration, views []seatMapView) *report {
	r := &report{
		RunID: runID, Targets: cfg.Targets, ScheduleID: scheduleID, N: cfg.N, C: cfg.C, Seats: cfg.Seats,
		Wall: duration(wall), Responses: map[string]int{},
	}
	perSeat := make(map[int]*seatReport, len(cfg.Seats))
	for _, s := range cfg.Seats {
		r.PerSeat = append(r.PerSeat, seatReport{Seat: s, Map: mapStatus(views, s)})
	}
	for i := range r.PerSeat {
		perSeat[r.PerSeat[i].Seat] = &r.PerSeat[i]
	}

	latencies := make([]time.Duration, 0, len(outcomes))
	for _, o := range outcomes {
		k := o.key()
		r.Responses[k]++
		if !o.Sent {
			continue
		}
		r.Sent++
		latencies = append(latencies, o.Latency)
		if s := perSeat[o.Seat]; s != nil {
			s.Requests++
			if k == keyOK {
				s.OK++
			}
		}
		if k == keyTransportError && len(r.TransportErrors) < maxErrorSamples && !slices.Contains(r.TransportErrors, o.Err) {
			r.TransportErrors = append(r.TransportErrors, o.Err)
		}
	}
	if wall > 0 {
		r.Throughput = float64(r.Sent) / wall.Seconds()
	}
	slices.Sort(latencies)
	r.Latency = latency{
		P50: duration(percentile(latencies, 50)),
		P90: duration(percentile(latencies, 90)),
		P99: duration(percentile(latencies, 99)),
		Max: duration(percentile(latencies, 100)),
	}
	return r
}

// percentile returns the nearest-rank p-th percentile of sorted: the
// smallest value with at least p% of the values at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// mapStatus is what the targets said about seat after the run.
func mapStatus(views []seatMapView, seat int) string {
	var seen []string
	for _, v := range views {
		st := "error"
		if v.Err == nil {
			var ok bool
			if st, ok = v.Statuses[seat]; !ok {
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
