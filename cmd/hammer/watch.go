package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// watchGrace is how long the watcher waits, after the last answer, for
// the events still on their way.
const watchGrace = 3 * time.Second

// watcher follows the live seat maps of the hammered schedules on one
// instance and notes when each seat's event of the status it watches for
// ("reserved" for bookings, "held" for holds) arrived.
type watcher struct {
	// life is the streams' context, ended by stop: not the caller's, which
	// for a schedule made during a run is the run's own and ends with it,
	// before the events of its last bookings have arrived.
	life    context.Context
	end     context.CancelFunc
	target  string
	extra   int    // reading-only clients per schedule
	form    string // the seat map's form the streams ask for: formFull or formCompact
	status  string // the status whose events are matched
	client  *http.Client
	drained atomic.Int64 // reading-only clients whose stream ended early
	// resumed counts the streams the watcher reopened with Last-Event-ID
	// after the server ended them (an instance shutting down).
	resumed atomic.Int64
	stopped atomic.Bool // set by stop: a stream ending now is no failure
	wg      sync.WaitGroup

	mu     sync.Mutex
	bodies []io.Closer // the open streams, closed by stop
	seen   map[seatRef]time.Time
	events int
	err    error
	// snapshotForm and snapshotBytes are those of the first snapshot the
	// watched (not reading-only) stream sent.
	snapshotForm  string
	snapshotBytes int
}

// newWatcher watches target's streams in form (formFull or formCompact)
// for the seats' events of status, with extra reading-only clients per
// schedule.
func newWatcher(target string, extra int, form, status string) *watcher {
	life, end := context.WithCancel(context.Background())
	return &watcher{life: life, end: end, target: target, extra: extra, form: form, status: status, client: &http.Client{},
		seen: map[seatRef]time.Time{}}
}

// follow opens the schedule's stream, and the reading-only ones, and
// returns once their snapshots have arrived: from then on no booking of it
// is missed. The streams last until stop, whatever the caller's context
// does (the run's ends before the last events arrive).
func (w *watcher) follow(_ context.Context, schedule int64) error {
	ctx := w.life
	for range w.extra {
		if err := w.open(ctx, schedule, true); err != nil {
			return err
		}
	}
	return w.open(ctx, schedule, false)
}

// stop closes every stream and waits for their readers. It is idempotent.
func (w *watcher) stop() {
	w.stopped.Store(true)
	w.mu.Lock()
	bodies := w.bodies
	w.bodies = nil
	w.mu.Unlock()
	for _, b := range bodies {
		_ = b.Close()
	}
	w.end() // and any reopen in flight
	w.wg.Wait()
}

// ended reports whether a stream that ended did so because the run did.
func (w *watcher) ended(ctx context.Context) bool {
	return w.stopped.Load() || ctx.Err() != nil
}

// open opens one stream; a reading-only one just drains it.
func (w *watcher) open(ctx context.Context, schedule int64, drainOnly bool) error {
	// A stream refused 503 (the database failing over: no snapshot to
	// send) is asked for again.
	var body io.ReadCloser
	err := newPatience().do(ctx, func() (err error) {
		body, err = w.connect(ctx, schedule, "")
		return err
	})
	if err != nil {
		return err
	}
	sc := eventScanner(body)
	// The snapshot comes first; it is read whole before the hammer
	// starts, so that the run measures watched bookings, not clients
	// joining.
	snapshot := ""
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			snapshot = data
			break
		}
	}
	if sc.Err() != nil {
		_ = body.Close()
		return fmt.Errorf("watch schedule %d: %w", schedule, sc.Err())
	}
	if !drainOnly {
		m, err := parseSeatMap([]byte(snapshot))
		if err != nil {
			_ = body.Close()
			return fmt.Errorf("watch schedule %d: snapshot: %w", schedule, err)
		}
		w.mu.Lock()
		if w.snapshotForm == "" {
			w.snapshotForm, w.snapshotBytes = m.Form, len(snapshot)
		}
		w.mu.Unlock()
	}
	if err := w.keep(schedule, body); err != nil {
		return err
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { _ = body.Close() }()
		if drainOnly {
			_, _ = io.Copy(io.Discard, body)
			if !w.ended(ctx) {
				w.drained.Add(1)
			}
			return
		}
		last := w.read(ctx, schedule, sc, "")
		// A stream the server ended (its instance shutting down, behind a
		// load balancer) is reopened with Last-Event-ID, as EventSource
		// does: the changes after it, or a fresh snapshot, arrive then.
		for !w.ended(ctx) {
			body, sc, err := w.resume(ctx, schedule, last)
			if err != nil {
				if !w.ended(ctx) {
					w.fail(err)
				}
				return
			}
			w.resumed.Add(1)
			last = w.read(ctx, schedule, sc, last)
			_ = body.Close()
		}
	}()
	return nil
}

// connect opens schedule's stream (after the event id last, when given)
// and returns its body once the server has answered 200.
func (w *watcher) connect(ctx context.Context, schedule int64, last string) (io.ReadCloser, error) {
	url := fmt.Sprintf("%s/schedules/%d/seats/events", w.target, schedule)
	if w.form == formCompact {
		url += "?form=" + formCompact
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("watch schedule %d: %w", schedule, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer func() { _ = resp.Body.Close() }()
		e := &apiError{Op: fmt.Sprintf("watch schedule %d", schedule), Status: resp.StatusCode}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e.Problem)
		return nil, e
	}
	return resp.Body, nil
}

// keep registers an open stream's body for stop to close; once the
// watcher has stopped it closes the body instead and says so.
func (w *watcher) keep(schedule int64, body io.ReadCloser) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		_ = body.Close()
		return fmt.Errorf("watch schedule %d: the watcher has stopped", schedule)
	}
	w.bodies = append(w.bodies, body)
	return nil
}

// eventScanner reads a stream line by line; a snapshot of a large
// schedule is one long line (some 11 MB for 100,000 seats in the full
// form).
func eventScanner(body io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxBody)
	return sc
}

// resumeFor bounds the attempts to reopen an ended stream.
const resumeFor = 10 * time.Second

// resume reopens schedule's stream after the event id last, retrying for
// resumeFor while the server refuses or cannot be reached.
func (w *watcher) resume(ctx context.Context, schedule int64, last string) (io.ReadCloser, *bufio.Scanner, error) {
	deadline := time.Now().Add(resumeFor)
	for {
		body, err := w.connect(ctx, schedule, last)
		if err == nil {
			if err := w.keep(schedule, body); err != nil {
				return nil, nil, err
			}
			return body, eventScanner(body), nil
		}
		if time.Now().After(deadline) || w.ended(ctx) {
			return nil, nil, fmt.Errorf("reopen after %s: %w", last, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// read follows one open stream until it ends, noting each seat's first
// event of the status watched (from a seat event, or from a snapshot sent
// on a reopen, of either form), and returns the id of the last event read
// (last when none).
func (w *watcher) read(ctx context.Context, schedule int64, sc *bufio.Scanner, last string) string {
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			last = line[len("id: "):]
		case strings.HasPrefix(line, "event: resync"):
			w.fail(fmt.Errorf("schedule %d: the stream fell behind (resync)", schedule))
		case strings.HasPrefix(line, "event: "):
			event = line[len("event: "):]
		case strings.HasPrefix(line, "data: ") && event == "seat":
			at := time.Now()
			var change struct {
				SeatID int    `json:"seatId"`
				Status string `json:"status"`
			}
			if json.Unmarshal([]byte(line[len("data: "):]), &change) != nil || change.Status != w.status {
				continue
			}
			w.mu.Lock()
			w.events++
			ref := seatRef{Schedule: schedule, Seat: change.SeatID}
			if _, dup := w.seen[ref]; !dup {
				w.seen[ref] = at
			}
			w.mu.Unlock()
		case strings.HasPrefix(line, "data: ") && event == "snapshot":
			at := time.Now()
			snap, err := parseSeatMap([]byte(line[len("data: "):]))
			if err != nil {
				w.fail(fmt.Errorf("schedule %d: snapshot: %w", schedule, err))
				continue
			}
			w.mu.Lock()
			for seat, st := range snap.Statuses {
				ref := seatRef{Schedule: schedule, Seat: seat}
				if _, dup := w.seen[ref]; !dup && st == w.status {
					w.seen[ref] = at
				}
			}
			w.mu.Unlock()
		}
	}
	if err := sc.Err(); err != nil && !w.ended(ctx) {
		w.fail(fmt.Errorf("schedule %d: stream: %w", schedule, err))
	}
	return last
}

func (w *watcher) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// watchReport is what -watch found.
type watchReport struct {
	Target string `json:"target"`
	// Status is the status of the events matched: "reserved" (each 200's
	// seat), or "held" (each seat of each 201 of best-available holds).
	Status string `json:"status"`
	// Form is the seat map's form the streams asked for; SnapshotForm and
	// SnapshotBytes are the form and size of the first snapshot sent.
	Form          string   `json:"form"`
	SnapshotForm  string   `json:"snapshotForm,omitempty"`
	SnapshotBytes int      `json:"snapshotBytes,omitempty"`
	Booked        int      `json:"booked"`
	Matched       int      `json:"matched"`
	Missing       []string `json:"missing,omitempty"` // "schedule/seat" of 200s whose event never came
	// Early counts events that arrived before their 200 (the event is
	// published before the answer is written); their delay counts as 0.
	Early int     `json:"early"`
	Delay latency `json:"delayMs"`
	// Streams counts the reading-only clients; Dropped those whose stream
	// ended before the run did.
	Streams int   `json:"streams,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
	// Resumed counts the watched streams reopened with Last-Event-ID after
	// the server ended them.
	Resumed int64  `json:"resumed,omitempty"`
	Error   string `json:"error,omitempty"`
}

// finish waits watchGrace for events still due, stops the streams and
// matches every 200 with its event.
func (w *watcher) finish(outcomes []outcome) *watchReport {
	booked := map[seatRef]time.Time{}
	for _, o := range outcomes {
		if o.Status == http.StatusOK && !o.BadSuccess {
			booked[o.Seat] = o.At
		}
	}
	return w.finishSeats(booked)
}

// finishHolds is finish for holds: every seat of every 201 of schedule
// is matched with its "held" event.
func (w *watcher) finishHolds(schedule int64, outcomes []holdOutcome) *watchReport {
	held := map[seatRef]time.Time{}
	for _, o := range outcomes {
		if o.granted() {
			for _, s := range o.Seats {
				held[seatRef{Schedule: schedule, Seat: s}] = o.At
			}
		}
	}
	return w.finishSeats(held)
}

// finishSeats waits watchGrace for events still due, stops the streams
// and matches each seat of booked, answered at its time, with its event.
func (w *watcher) finishSeats(booked map[seatRef]time.Time) *watchReport {
	deadline := time.Now().Add(watchGrace)
	for time.Now().Before(deadline) && w.missing(booked) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	w.stop()

	r := &watchReport{Target: w.target, Status: w.status, Form: w.form, Booked: len(booked), Dropped: w.drained.Load(), Resumed: w.resumed.Load()}
	hist := newLatencyHistogram()
	w.mu.Lock()
	defer w.mu.Unlock()
	r.SnapshotForm, r.SnapshotBytes = w.snapshotForm, w.snapshotBytes
	for ref, answered := range booked {
		seen, ok := w.seen[ref]
		if !ok {
			r.Missing = append(r.Missing, fmt.Sprintf("%d/%d", ref.Schedule, ref.Seat))
			continue
		}
		r.Matched++
		delay := seen.Sub(answered)
		if delay <= 0 {
			r.Early++
			delay = 0
		}
		_ = hist.RecordValue(max(delay.Microseconds(), minLatencyMicros))
	}
	sort.Strings(r.Missing)
	if r.Matched > 0 {
		r.Delay = latencyOf(hist)
	}
	if w.err != nil {
		r.Error = w.err.Error()
	}
	return r
}

func (w *watcher) missing(booked map[seatRef]time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for ref := range booked {
		if _, ok := w.seen[ref]; !ok {
			n++
		}
	}
	return n
}
