package main

// -scenario seat-map: a crowd looking at a schedule's seat map.
//
//  1. The schedule is -schedule's, or a fresh venue laid out as
//     best-available's is (-rows, -row-seats, -sections, -layout).
//  2. -c clients, one connection each (to a loopback target, each from a
//     loopback address of its own: the service limits its public routes
//     per client address), read GET /schedules/{id}/seats?form=compact
//     (-form full: the full form) with Accept-Encoding: gzip for
//     -duration, round-robin over the -url targets. Every other client
//     revalidates: it sends the ETag of the last map it got as
//     If-None-Match, and is answered 304 while nothing changed.
//  3. Meanwhile, with -book-rate R, R bookings a second (POST
//     /reservations of the venue's seats in turn, as -users users) change
//     the map; a second hammer run does as well.
//
// The report gives the reads a second, split by 200 and 304, their
// latency, and the bytes of a 200 on the wire; the bookings' answers and
// rate; and the targets: p99 <= 20 ms with 64 clients while bookings go
// on, 304s at >= 10,000 a second. The first 200 of each client is
// decompressed and read: it must be the schedule's map, every seat of it.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The targets of -scenario seat-map.
const (
	targetSeatMapP99Millis  = 20     // p99 of a read, with 64 clients while bookings go on
	targetNotModifiedPerSec = 10_000 // 304s a second
	// maxBookingsInFlight bounds the bookings -book-rate has in flight;
	// one due while they all are is skipped (and counted).
	maxBookingsInFlight = 64
)

// seatMapReport is -scenario seat-map's part of the report.
type seatMapReport struct {
	Schedule  int64  `json:"scheduleId"`
	Venue     string `json:"venue"`
	SeatCount int    `json:"seatCount"`
	Form      string `json:"form"`
	// FormsSeen are the forms of the 200s read whole (each client's
	// first); the full form alone when the service has no compact one.
	FormsSeen []string `json:"formsSeen"`
	Clients   int      `json:"clients"`
	// Revalidating clients send If-None-Match.
	Revalidating int `json:"revalidating"`
	// SourceAddresses is how many loopback addresses the clients'
	// connections came from (0: the usual one).
	SourceAddresses int      `json:"sourceAddresses"`
	Wall            duration `json:"wallMs"`
	Requests        int      `json:"requests"`
	PerSec          float64  `json:"requestsPerSec"`
	OK              int      `json:"ok"`
	OKPerSec        float64  `json:"okPerSec"`
	NotModified     int      `json:"notModified"`
	// NotModifiedPerSec is the 304s a second.
	NotModifiedPerSec float64        `json:"notModifiedPerSec"`
	Responses         map[string]int `json:"responses"`
	Latency           latency        `json:"latencyMs"`
	OKLatency         latency        `json:"okLatencyMs"`
	NotModLatency     latency        `json:"notModifiedLatencyMs"`
	// BytesPerOK is the mean body of a 200 on the wire; GzipOK counts the
	// 200s sent gzip-compressed, NoETag those without an ETag.
	BytesPerOK float64 `json:"bytesPerOk"`
	GzipOK     int     `json:"gzipOk"`
	NoETag     int     `json:"okWithoutEtag"`
	// Revalidations counts the requests sent with If-None-Match,
	// ChangedOK those of them answered 200 (the map had changed).
	Revalidations int `json:"revalidations"`
	ChangedOK     int `json:"revalidationsAnsweredOk"`
	// UnaskedNotModified counts the 304s to requests without
	// If-None-Match: a client without the map told it has it.
	UnaskedNotModified int `json:"notModifiedUnasked"`
	// Samples counts the 200s read whole; BadSamples says what was wrong
	// with some.
	Samples       int             `json:"samplesRead"`
	BadSamples    []string        `json:"badSamples,omitempty"`
	TransportErrs []string        `json:"transportErrorSamples,omitempty"`
	Bookings      *bookingsReport `json:"bookings,omitempty"`
	Targets       []target        `json:"targets"`
	TargetsMet    bool            `json:"targetsMet"`
}

// bookingsReport is what -book-rate's bookings did.
type bookingsReport struct {
	Rate   float64 `json:"ratePerSec"` // asked
	Sent   int     `json:"sent"`
	PerSec float64 `json:"perSec"`
	// Skipped counts the bookings that fell due while
	// maxBookingsInFlight were in flight; NoSeatsLeft is set when every
	// seat of the venue had been asked for before the end.
	Skipped       int            `json:"skipped"`
	NoSeatsLeft   bool           `json:"noSeatsLeft,omitempty"`
	Responses     map[string]int `json:"responses"`
	Latency       latency        `json:"latencyMs"`
	TransportErrs []string       `json:"transportErrorSamples,omitempty"`
}

// readerTally is what one client, or all of them, read.
type readerTally struct {
	responses                           map[string]int
	all, ok, notModified                *hdrhistogram.Histogram
	okBytes                             int64
	gzipOK, noETag                      int
	revalidations, changedOK, unasked   int
	samples                             int
	badSamples, transportErrs, formSeen []string
}

func newReaderTally() *readerTally {
	return &readerTally{responses: map[string]int{}, all: newLatencyHistogram(), ok: newLatencyHistogram(), notModified: newLatencyHistogram()}
}

// merge adds t's counts to into's.
func (into *readerTally) merge(t *readerTally) {
	for k, n := range t.responses {
		into.responses[k] += n
	}
	into.all.Merge(t.all)
	into.ok.Merge(t.ok)
	into.notModified.Merge(t.notModified)
	into.okBytes += t.okBytes
	into.gzipOK += t.gzipOK
	into.noETag += t.noETag
	into.revalidations += t.revalidations
	into.changedOK += t.changedOK
	into.unasked += t.unasked
	into.samples += t.samples
	into.badSamples = appendSamples(into.badSamples, t.badSamples...)
	into.transportErrs = appendSamples(into.transportErrs, t.transportErrs...)
	for _, f := range t.formSeen {
		if !slices.Contains(into.formSeen, f) {
			into.formSeen = append(into.formSeen, f)
		}
	}
}

// hammerSeatMap runs -scenario seat-map end to end.
func hammerSeatMap(ctx context.Context, sess *session) (*report, error) {
	cfg, a, runID, sm := sess.cfg, sess.api, sess.id, sess.cfg.SeatMap
	a.spreadSources()

	var v venue
	var err error
	desc := sm.describe()
	if cfg.ScheduleID > 0 {
		if v, err = a.venue(ctx, cfg.Targets[0], cfg.ScheduleID); err != nil {
			return nil, err
		}
		desc = fmt.Sprintf("an existing schedule of %d seats", v.SeatCount)
	} else if v, err = a.createVenue(ctx, cfg.Targets[0], sess.admin, "hammer "+runID+" seat map", sm.layout()); err != nil {
		return nil, err
	}

	var book *booker
	if sm.BookRate > 0 {
		users, err := mintUsers(cfg.Secret, runID, cfg.Users, sess.ttl)
		if err != nil {
			return nil, err
		}
		book = newBooker(cfg, users, v)
		defer book.close()
	}

	urls := make([]string, len(cfg.Targets))
	for i, t := range cfg.Targets {
		urls[i] = seatsURL(t, v.ID, sm.Form)
	}

	var (
		mu        sync.Mutex
		tally     = newReaderTally()
		workers   int
		startOnce sync.Once
		bookDone  = make(chan *bookingsReport, 1)
		booking   atomic.Bool // the bookings started: bookDone will say how they went
	)
	onTick, finish := progress(sess.progressOut, cfg)
	_, wall := drive(ctx, a, cfg.Targets, cfg.C, onTick, func() (stepFunc, func()) {
		revalidate := workers%2 == 1
		if n := cfg.SeatMap.Revalidating; n >= 0 {
			revalidate = workers < n
		}
		workers++
		mine := newReaderTally()
		plain := []string{"Accept-Encoding", "gzip"}
		var etag string
		sampled := false
		step := func(runCtx context.Context, i int, elapsed time.Duration) bool {
			if elapsed >= cfg.Duration {
				return false
			}
			startOnce.Do(func() {
				if book != nil {
					booking.Store(true)
					go func() { bookDone <- book.run(runCtx, cfg.Duration-elapsed) }()
				}
			})
			req := request{method: http.MethodGet, url: urls[i%len(urls)], header: plain, read: []string{"ETag", "Content-Encoding"}, sizeOnly: sampled}
			asked := revalidate && etag != ""
			if asked {
				req.header = []string{"Accept-Encoding", "gzip", "If-None-Match", etag}
				mine.revalidations++
			}
			res, err := a.do(ctx, req)
			recordLatency(mine.all, res.Latency)
			switch {
			case err != nil && ctx.Err() != nil:
				mine.responses[keyCanceled]++
				return false
			case err != nil:
				mine.responses[keyTransportError]++
				mine.transportErrs = appendSamples(mine.transportErrs, err.Error())
			case res.Status == http.StatusOK:
				mine.responses[keyOK]++
				recordLatency(mine.ok, res.Latency)
				mine.okBytes += int64(res.Size)
				if res.Header[1] == "gzip" {
					mine.gzipOK++
				}
				if res.Header[0] == "" {
					mine.noETag++
				}
				if asked {
					mine.changedOK++
				}
				etag = res.Header[0]
				if !sampled {
					sampled = true
					mine.samples++
					form, err := checkSample(res.Body, res.Header[1], v)
					if err != nil {
						mine.badSamples = appendSamples(mine.badSamples, err.Error())
					} else if !slices.Contains(mine.formSeen, form) {
						mine.formSeen = append(mine.formSeen, form)
					}
				}
			case res.Status == http.StatusNotModified:
				mine.responses[keyNotModified]++
				recordLatency(mine.notModified, res.Latency)
				if !asked {
					mine.unasked++
				}
			default:
				mine.responses[strconv.Itoa(res.Status)]++
			}
			return true
		}
		finish := func() {
			mu.Lock()
			defer mu.Unlock()
			tally.merge(mine)
		}
		return step, finish
	})
	finish()
	var bookings *bookingsReport
	if booking.Load() {
		bookings = <-bookDone
	}

	r := summarizeSeatMap(cfg, runID, v, desc, wall, tally, bookings)
	r.SeatMap.SourceAddresses = a.sourceAddresses()
	r.Verdict = judgeSeatMap(r)
	return r, nil
}

// Histogram key of a 304.
const keyNotModified = "304"

// checkSample reads a 200's body whole: decompressed as its
// Content-Encoding says, it must be v's seat map, every seat of it, in
// either form (which it returns).
func checkSample(body []byte, encoding string, v venue) (string, error) {
	data, err := decode(body, encoding)
	if err != nil {
		return "", err
	}
	m, err := parseSeatMap(data)
	switch {
	case err != nil:
		return "", err
	case m.ScheduleID != v.ID:
		return "", fmt.Errorf("a 200 is the seat map of schedule %d, want %d", m.ScheduleID, v.ID)
	case len(m.Statuses) != v.SeatCount:
		return "", fmt.Errorf("a 200's seat map has %d seats, want %d", len(m.Statuses), v.SeatCount)
	}
	for s := 1; s <= v.SeatCount; s++ {
		if _, ok := m.Statuses[s]; !ok {
			return "", fmt.Errorf("a 200's seat map lacks seat %d", s)
		}
	}
	return m.Form, nil
}

// booker books the venue's seats in turn at a rate, while the clients
// read.
type booker struct {
	api   *api
	cfg   config
	users []user
	venue venue
}

func newBooker(cfg config, users []user, v venue) *booker {
	return &booker{api: newAPI(maxBookingsInFlight, len(cfg.Targets), cfg.Timeout, cfg.Client), cfg: cfg, users: users, venue: v}
}

func (b *booker) close() { b.api.close() }

// run books seats 1, 2, ... at b.cfg.SeatMap.BookRate a second for d or
// until ctx ends, and waits for the bookings in flight.
func (b *booker) run(ctx context.Context, d time.Duration) *bookingsReport {
	rate := b.cfg.SeatMap.BookRate
	r := &bookingsReport{Rate: rate, Responses: map[string]int{}}
	hist := newLatencyHistogram()
	var (
		mu       sync.Mutex
		inFlight = make(chan struct{}, maxBookingsInFlight)
		wg       sync.WaitGroup
	)
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	due, seat := 0, 0
	for ctx.Err() == nil && time.Since(start) < d && !r.NoSeatsLeft {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		for n := int(time.Since(start).Seconds() * rate); due < n; due++ {
			if seat >= b.venue.SeatCount {
				r.NoSeatsLeft = true
				break
			}
			select {
			case inFlight <- struct{}{}:
			default:
				r.Skipped++
				continue
			}
			seat++
			i := r.Sent
			r.Sent++
			wg.Add(1)
			go func(seat int) {
				defer wg.Done()
				defer func() { <-inFlight }()
				target := b.cfg.Targets[i%len(b.cfg.Targets)]
				o := b.api.reserve(ctx, target, b.users[userOf(i, len(b.users))], seatRef{Schedule: b.venue.ID, Seat: seat})
				mu.Lock()
				defer mu.Unlock()
				k := o.key()
				r.Responses[k]++
				if k == keyTransportError {
					r.TransportErrs = appendSamples(r.TransportErrs, o.Err)
				}
				recordLatency(hist, o.Latency)
			}(seat)
		}
	}
	wg.Wait()
	if elapsed := time.Since(start); elapsed > 0 {
		r.PerSec = float64(r.Sent) / elapsed.Seconds()
	}
	r.Latency = latencyOf(hist)
	return r
}

// summarizeSeatMap folds the clients' tallies and the bookings into a
// report without a verdict.
func summarizeSeatMap(cfg config, runID string, v venue, desc string, wall time.Duration, t *readerTally, bookings *bookingsReport) *report {
	sm := &seatMapReport{Schedule: v.ID, Venue: desc, SeatCount: v.SeatCount, Form: cfg.SeatMap.Form, FormsSeen: t.formSeen,
		Clients: cfg.C, Revalidating: revalidatingOf(cfg), Wall: duration(wall), Responses: t.responses,
		OK: t.responses[keyOK], NotModified: t.responses[keyNotModified], GzipOK: t.gzipOK, NoETag: t.noETag,
		Revalidations: t.revalidations, ChangedOK: t.changedOK, UnaskedNotModified: t.unasked,
		Samples: t.samples, BadSamples: t.badSamples, TransportErrs: t.transportErrs, Bookings: bookings}
	for k, n := range t.responses {
		if k != keyCanceled {
			sm.Requests += n
		}
	}
	if wall > 0 {
		sm.PerSec = float64(sm.Requests) / wall.Seconds()
		sm.OKPerSec = float64(sm.OK) / wall.Seconds()
		sm.NotModifiedPerSec = float64(sm.NotModified) / wall.Seconds()
	}
	sm.Latency, sm.OKLatency, sm.NotModLatency = latencyOf(t.all), latencyOf(t.ok), latencyOf(t.notModified)
	if sm.OK > 0 {
		sm.BytesPerOK = float64(t.okBytes) / float64(sm.OK)
	}
	sm.Targets, sm.TargetsMet = weighSeatMap(sm)
	return &report{
		RunID: runID, Scenario: cfg.Scenario, Targets: cfg.Targets, Schedules: []int64{v.ID}, Duration: duration(cfg.Duration),
		C: cfg.C, Users: cfg.Users, Sent: sm.Requests, Wall: sm.Wall, Throughput: sm.PerSec, Responses: sm.Responses,
		Latency: sm.Latency, TransportErrs: sm.TransportErrs, SeatMap: sm,
	}
}

// weighSeatMap sets the run's figures against the targets.
func weighSeatMap(sm *seatMapReport) ([]target, bool) {
	p99 := float64(sm.Latency.P99) / 1e6
	booking := "no bookings going on"
	if b := sm.Bookings; b != nil && b.Sent > 0 {
		booking = fmt.Sprintf("%.0f bookings/s going on", b.PerSec)
	}
	targets := []target{
		{Name: fmt.Sprintf("p99 of a seat-map read (%d clients, %s)", sm.Clients, booking), Want: fmt.Sprintf("<= %d ms", targetSeatMapP99Millis),
			Value: p99, Shown: sm.Latency.P99.String(), Met: sm.Requests > 0 && p99 <= targetSeatMapP99Millis},
		{Name: "304s a second", Want: fmt.Sprintf(">= %d", targetNotModifiedPerSec),
			Value: sm.NotModifiedPerSec, Shown: fmt.Sprintf("%.0f", sm.NotModifiedPerSec), Met: sm.NotModifiedPerSec >= targetNotModifiedPerSec},
	}
	return targets, targets[0].Met && targets[1].Met
}

// judgeSeatMap passes a seat-map run only if it ran to its end, every
// read was answered 200, 304 (to a request with If-None-Match) or 429,
// nothing failed on the wire or with a 5xx, every 200 read whole was the
// schedule's map, and every booking was answered 200 or a 409 a booking
// may get (or 429). The targets are reported, not judged.
func judgeSeatMap(r *report) verdict {
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	sm := r.SeatMap
	if n := sm.Responses[keyCanceled]; n > 0 {
		fail("run interrupted: %d reads cancelled", n)
	}
	if sm.Requests == 0 {
		fail("no seat-map read was answered")
	}
	judgeResponses(sm.Responses, func(k string) bool {
		return k == keyOK || k == keyNotModified || k == "429" || k == keyCanceled
	}, "seat-map reads", sm.TransportErrs, fail)
	if sm.UnaskedNotModified > 0 {
		fail("%d reads without If-None-Match answered 304 Not Modified", sm.UnaskedNotModified)
	}
	if len(sm.BadSamples) > 0 {
		fail("%d of %d seat maps read whole were wrong (e.g. %s)", len(sm.BadSamples), sm.Samples, sm.BadSamples[0])
	}
	if b := sm.Bookings; b != nil {
		judgeResponses(b.Responses, func(k string) bool {
			return k == keyOK || k == keySeatTaken || k == keySeatLocked || k == "409 seat_held" || k == keyRateLimited || k == keyCanceled
		}, "bookings", b.TransportErrs, func(format string, a ...any) { fail("bookings: "+format, a...) })
	}
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// writeSeatMapText prints a seat-map report's figures and returns its
// targets.
func writeSeatMapText(p printer, r *report) []target {
	sm := r.SeatMap
	p("schedule:\t%d: %s", sm.Schedule, sm.Venue)
	sources := "their usual address"
	if sm.SourceAddresses > 0 {
		sources = fmt.Sprintf("%d loopback addresses", sm.SourceAddresses)
	}
	p("clients:\t%d (%d revalidating with If-None-Match), form %s, gzip asked; connections from %s", sm.Clients, sm.Revalidating, sm.Form, sources)
	p("reads:\t%d in %s: %.0f/s; 200: %d (%.0f/s), 304: %d (%.0f/s)", sm.Requests, sm.Wall, sm.PerSec, sm.OK, sm.OKPerSec, sm.NotModified, sm.NotModifiedPerSec)
	for _, l := range []struct {
		name string
		l    latency
	}{{"all", sm.Latency}, {"200", sm.OKLatency}, {"304", sm.NotModLatency}} {
		p("  latency, %s:\t%s", l.name, l.l)
	}
	forms := "none read"
	if len(sm.FormsSeen) > 0 {
		forms = strings.Join(sm.FormsSeen, ", ")
	}
	p("  200 bodies:\t%.0f B on the wire on average; %d of %d gzip-compressed, %d without an ETag; form read: %s (%d read whole)",
		sm.BytesPerOK, sm.GzipOK, sm.OK, sm.NoETag, forms, sm.Samples)
	p("  revalidations:\t%d sent, %d answered 304, %d answered 200 (the map had changed); %d 304s unasked",
		sm.Revalidations, sm.NotModified-sm.UnaskedNotModified, sm.ChangedOK, sm.UnaskedNotModified)
	writeResponses(p, sm.Responses, max(sm.Requests, 1), slices.Concat(sm.TransportErrs, sm.BadSamples))
	if sm.Responses["429"] > 0 {
		p("  note:\tthe service limits the public routes per client address (RATE_LIMIT_IP): serve with RATE_LIMIT_IP=0, or hammer a loopback address")
	}
	if b := sm.Bookings; b != nil {
		left := ""
		if b.NoSeatsLeft {
			left = "; every seat asked for before the end"
		}
		p("bookings:\t%d sent at %.0f/s (asked %.0f/s), %d skipped with %d in flight%s", b.Sent, b.PerSec, b.Rate, b.Skipped, maxBookingsInFlight, left)
		p("  latency:\t%s", b.Latency)
		writeResponses(p, b.Responses, 0, b.TransportErrs)
	} else {
		p("bookings:\tnone (-book-rate 0)")
	}
	return sm.Targets
}

// revalidatingOf is how many of cfg's clients revalidate.
func revalidatingOf(cfg config) int {
	if n := cfg.SeatMap.Revalidating; n >= 0 {
		return n
	}
	return cfg.C / 2
}
