package main

// The compact reads of -scenario platform: GET
// /schedules/{id}/seats?form=compact with Accept-Encoding: gzip, as a
// browser opening an event's page sends it, at a steady rate whatever
// the answers' latency (a read is due at its time, not when the one
// before it was answered), at most -c in flight. The first 200 of each
// schedule is kept, and read whole once the reads are over: it must be
// that schedule's map, every seat.

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// paceTick is how often the reader sends the reads that fell due; a
// tick that comes stallGap after the one before it means the hammer was
// not running.
const (
	paceTick = 5 * time.Millisecond
	stallGap = 10 * paceTick
)

// readPhase is one phase's reads, in figures.
type readPhase struct {
	Name string `json:"name"`
	// Schedules is how many schedules the phase read, Stadiums how many
	// of them are stadiums.
	Schedules int      `json:"schedules"`
	Stadiums  int      `json:"stadiums"`
	Wall      duration `json:"wallMs"`
	Rate      float64  `json:"ratePerSec"` // asked
	Sent      int      `json:"sent"`
	PerSec    float64  `json:"perSec"`
	Skipped   int      `json:"skipped"`
	// Late counts the reads not sent because they fell due while the
	// hammer itself was not running (stallGap): its own stall, not the
	// service's.
	Late      int            `json:"late"`
	Responses map[string]int `json:"responses"`
	// Latency is of the 200s; StadiumLatency and HallLatency of the
	// stadiums' and the halls' alone.
	Latency        latency `json:"latencyMs"`
	StadiumLatency latency `json:"stadiumLatencyMs"`
	HallLatency    latency `json:"hallLatencyMs,omitzero"`
	BytesPerOK     float64 `json:"bytesPerOk"`
	GzipOK         int     `json:"gzipOk"`
	// Checked counts the 200s read whole, BadSamples what was wrong with
	// some.
	Checked       int      `json:"checked"`
	BadSamples    []string `json:"badSamples,omitempty"`
	TransportErrs []string `json:"transportErrorSamples,omitempty"`
}

// mapReader reads the compact maps of the schedules whose seats it knows
// (seats by id), through targets in turn, at most inFlight at once.
type mapReader struct {
	api      *api
	targets  []string
	inFlight int
	seats    map[int64]int
	stadium  map[int64]bool

	mu      sync.Mutex
	checked map[int64]bool // the schedules whose first 200 was read whole
}

func newMapReader(a *api, targets []string, inFlight int, stadiums, halls []int64, stadiumSeats, hallSeats int) *mapReader {
	r := &mapReader{api: a, targets: targets, inFlight: inFlight, seats: map[int64]int{}, stadium: map[int64]bool{}, checked: map[int64]bool{}}
	for _, id := range stadiums {
		r.seats[id], r.stadium[id] = stadiumSeats, true
	}
	for _, id := range halls {
		r.seats[id] = hallSeats
	}
	return r
}

// phaseTally is what a phase's reads found, as they are answered.
type phaseTally struct {
	mu                   sync.Mutex
	responses            map[string]int
	all, stadiums, halls *hdrhistogram.Histogram
	okBytes              int64
	gzipOK               int
	checked              int
	bad, errs            []string
	read                 map[int64]bool
	// kept are the maps to read whole once the reads are over: reading
	// a stadium's map takes the hammer CPU it would otherwise take from
	// the reads it times.
	kept []keptMap
}

// keptMap is a 200's body as sent, kept to be read whole.
type keptMap struct {
	schedule int64
	body     []byte
	encoding string
}

// readRun is one phase, run in slices that alternate with the other
// phase's: pick(n) is the schedule of its n-th read due (from 0, over all
// its slices; called by one goroutine, in turn).
type readRun struct {
	name          string
	pick          func(n int) int64
	tally         *phaseTally
	sent, skipped int
	late          int
	wall          time.Duration
}

func newReadRun(name string, pick func(n int) int64) *readRun {
	return &readRun{name: name, pick: pick, tally: &phaseTally{responses: map[string]int{}, all: newLatencyHistogram(),
		stadiums: newLatencyHistogram(), halls: newLatencyHistogram(), read: map[int64]bool{}}}
}

// run reads for ph at rate a second for d, or until ctx ends, and waits
// for the reads in flight.
func (r *mapReader) run(ctx context.Context, ph *readRun, rate float64, d time.Duration) {
	slots := make(chan struct{}, r.inFlight)
	var wg sync.WaitGroup
	sent, skipped, late := 0, 0, 0
	start := time.Now()
	tick := time.NewTicker(paceTick)
	defer tick.Stop()
	var prev time.Duration
	for ctx.Err() == nil {
		elapsed := time.Since(start)
		if elapsed >= d {
			break
		}
		if elapsed-prev > stallGap {
			// The loop itself did not run (the hammer starved of CPU): the
			// reads that fell due meanwhile are not sent in a burst that
			// the service never asked for.
			late += max(int(elapsed.Seconds()*rate)-int((prev+paceTick).Seconds()*rate), 0)
		}
		prev = elapsed
		for due := int(elapsed.Seconds() * rate); sent+skipped+late < due; {
			select {
			case slots <- struct{}{}:
				n := ph.sent + sent + ph.skipped + skipped + ph.late + late
				sent++
				schedule := ph.pick(n)
				wg.Go(func() {
					defer func() { <-slots }()
					r.readOne(ctx, r.targets[n%len(r.targets)], schedule, ph.tally)
				})
			default:
				skipped++
			}
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	ph.wall += time.Since(start)
	ph.sent += sent
	ph.skipped += skipped
	ph.late += late
	wg.Wait()
}

// result is ph's figures, asked rate a second, once every map it kept
// is read whole.
func (r *mapReader) result(ph *readRun, rate float64) readPhase {
	t := ph.tally
	for _, m := range t.kept {
		t.checked++
		if _, err := checkSample(m.body, m.encoding, venue{ID: m.schedule, SeatCount: r.seats[m.schedule]}); err != nil {
			t.bad = appendSamples(t.bad, "schedule "+strconv.FormatInt(m.schedule, 10)+": "+err.Error())
		}
	}
	t.kept = nil
	p := readPhase{Name: ph.name, Wall: duration(ph.wall), Rate: rate, Sent: ph.sent, Skipped: ph.skipped, Late: ph.late,
		Responses: t.responses, Checked: t.checked, BadSamples: t.bad, TransportErrs: t.errs, GzipOK: t.gzipOK}
	if ph.wall > 0 {
		p.PerSec = float64(ph.sent) / ph.wall.Seconds()
	}
	for id := range t.read {
		p.Schedules++
		if r.stadium[id] {
			p.Stadiums++
		}
	}
	if n := t.all.TotalCount(); n > 0 {
		p.Latency = latencyOf(t.all)
		p.BytesPerOK = float64(t.okBytes) / float64(n)
	}
	if t.stadiums.TotalCount() > 0 {
		p.StadiumLatency = latencyOf(t.stadiums)
	}
	if t.halls.TotalCount() > 0 {
		p.HallLatency = latencyOf(t.halls)
	}
	return p
}

// readOne reads schedule's compact map through target into t.
func (r *mapReader) readOne(ctx context.Context, target string, schedule int64, t *phaseTally) {
	r.mu.Lock()
	whole := !r.checked[schedule]
	r.checked[schedule] = true
	r.mu.Unlock()
	req := request{method: http.MethodGet, url: seatsURL(target, schedule, formCompact), header: []string{"Accept-Encoding", "gzip"},
		read: []string{"Content-Encoding"}, sizeOnly: !whole}
	res, err := r.api.do(ctx, req)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.read[schedule] = true
	switch {
	case err != nil && ctx.Err() != nil:
		t.responses[keyCanceled]++
	case err != nil:
		t.responses[keyTransportError]++
		t.errs = appendSamples(t.errs, err.Error())
	case res.Status == http.StatusOK:
		t.responses[keyOK]++
		recordLatency(t.all, res.Latency)
		if r.stadium[schedule] {
			recordLatency(t.stadiums, res.Latency)
		} else {
			recordLatency(t.halls, res.Latency)
		}
		t.okBytes += int64(res.Size)
		if res.Header[0] == "gzip" {
			t.gzipOK++
		}
		if whole {
			t.kept = append(t.kept, keptMap{schedule: schedule, body: res.Body, encoding: res.Header[0]})
		}
	default:
		t.responses[strconv.Itoa(res.Status)]++
	}
}
