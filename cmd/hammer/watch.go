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
// instance and notes when each seat's "reserved" event arrived.
type watcher struct {
	// life is the streams' context, ended by stop: not the caller's, which
	// for a schedule made during a run is the run's own and ends with it,
	// before the events of its last bookings have arrived.
	life    context.Context
	end     context.CancelFunc
	target  string
	extra   int // reading-only clients per schedule
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
}

func newWatcher(target string, extra int) *watcher {
	life, end := context.WithCancel(context.Background())
	return &watcher{life: life, end: end, target: target, extra: extra, client: &http.Client{}, seen: map[seatRef]time.Time{}}
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
	body, err := w.connect(ctx, schedule, "")
	if err != nil {
		return err
	}
	sc := eventScanner(body)
	// The snapshot comes first; it is read whole before the hammer
	// starts, so that the run measures watched bookings, not clients
	// joining.
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			break
		}
	}
	if sc.Err() != nil {
		body.Close()
		return fmt.Errorf("watch schedule %d: %w", schedule, sc.Err())
	}
	if err := w.keep(schedule, body); err != nil {
		return err
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer body.Close()
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
			body.Close()
		}
	}()
	return nil
}

// connect opens schedule's stream (after the event id last, when given)
// and returns its body once the server has answered 200.
func (w *watcher) connect(ctx context.Context, schedule int64, last string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/schedules/%d/seats/events", w.target, schedule), nil)
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
		resp.Body.Close()
		return nil, fmt.Errorf("watch schedule %d: %s", schedule, resp.Status)
	}
	return resp.Body, nil
}

// keep registers an open stream's body for stop to close; once the
// watcher has stopped it closes the body instead and says so.
func (w *watcher) keep(schedule int64, body io.ReadCloser) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped.Load() {
		body.Close()
		return fmt.Errorf("watch schedule %d: the watcher has stopped", schedule)
	}
	w.bodies = append(w.bodies, body)
	return nil
}

// eventScanner reads a stream line by line; a snapshot of a large
// schedule is one long line.
func eventScanner(body io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
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
// "reserved" (from a seat event, or from a snapshot sent on a reopen), and
// returns the id of the last event read (last when none).
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
			if json.Unmarshal([]byte(line[len("data: "):]), &change) != nil || change.Status != "reserved" {
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
			var snap struct {
				Seats []struct {
					SeatID int    `json:"seatId"`
					Status string `json:"status"`
				} `json:"seats"`
			}
			if json.Unmarshal([]byte(line[len("data: "):]), &snap) != nil {
				continue
			}
			w.mu.Lock()
			for _, seat := range snap.Seats {
				ref := seatRef{Schedule: schedule, Seat: seat.SeatID}
				if _, dup := w.seen[ref]; !dup && seat.Status == "reserved" {
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
	Target  string   `json:"target"`
	Booked  int      `json:"booked"`
	Matched int      `json:"matched"`
	Missing []string `json:"missing,omitempty"` // "schedule/seat" of 200s whose event never came
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
	deadline := time.Now().Add(watchGrace)
	for time.Now().Before(deadline) && w.missing(booked) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	w.stop()

	r := &watchReport{Target: w.target, Booked: len(booked), Dropped: w.drained.Load(), Resumed: w.resumed.Load()}
	hist := newLatencyHistogram()
	w.mu.Lock()
	defer w.mu.Unlock()
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
