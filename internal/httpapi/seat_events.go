package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// SeatFeed is what the live seat map needs of the seat feed.
type SeatFeed interface {
	Subscribe(ctx context.Context, scheduleID int64, buffer int) (*seatfeed.Subscription, error)
	Head(ctx context.Context, scheduleID int64) (string, error)
	Since(ctx context.Context, scheduleID int64, afterID string) ([]seatfeed.Event, bool, error)
}

// Defaults of the live seat map's Options.
const (
	DefaultStreamHeartbeat = 15 * time.Second
	DefaultMaxStreams      = 5000
	// streamBuffer is how many batches of changes (each what one read of
	// the feed found, up to 512) a stream may fall behind before it is
	// ended with a resync event.
	streamBuffer = 64
	// streamRetry is the reconnection delay suggested to EventSource.
	streamRetry = 1000
)

var (
	errTooManyStreams = apiError{status: http.StatusServiceUnavailable, code: "too_many_streams", title: "Too many streams",
		detail:     "This instance serves as many live seat maps as it may; retry after the time in Retry-After.",
		retryAfter: 5 * time.Second}
	errNoFeed = apiError{status: http.StatusServiceUnavailable, code: "unavailable", title: "Service unavailable",
		detail: "The live seat map needs Redis, which this instance is not configured with.", retryAfter: unavailableRetryAfter}
)

// streams counts and caps the open event streams of one instance.
type streams struct {
	open     atomic.Int64
	max      int64
	observer Observer
}

func (s *streams) enter() bool {
	n := s.open.Add(1)
	if n > s.max {
		s.open.Add(-1)
		return false
	}
	s.observer.Streams(n)
	return true
}

func (s *streams) leave() { s.observer.Streams(s.open.Add(-1)) }

// seatEvents streams a schedule's seat map as Server-Sent Events: first
// a `snapshot` (the whole map, with the id of the last change it
// includes), then a `seat` event per change made on any instance. A client
// that reconnects with Last-Event-ID gets the changes it missed, or a
// fresh snapshot when they are no longer kept. A comment every heartbeat
// keeps idle connections open through proxies. A client that falls
// streamBuffer batches of changes behind gets a `resync` event and is
// disconnected: it never slows the bookings.
func (h *handler) seatEvents(w http.ResponseWriter, r *http.Request) {
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		writeError(w, r, h.log, reservation.ErrScheduleNotFound)
		return
	}
	if h.feed == nil {
		writeProblem(w, r, errNoFeed)
		return
	}
	ctx := r.Context()
	if _, err := h.bookings.Schedule(ctx, id); err != nil {
		writeError(w, r, h.log, err)
		return
	}
	if !h.streams.enter() {
		writeProblem(w, r, errTooManyStreams)
		return
	}
	defer h.streams.leave()

	// Subscribe before reading where to start, so that no change falls
	// between the two; changes already sent are skipped by id.
	sub, err := h.feed.Subscribe(ctx, id, streamBuffer)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	defer sub.Close()
	out := &eventWriter{w: w, rc: http.NewResponseController(w)}
	last, first, err := h.streamStart(ctx, id, r.Header.Get("Last-Event-ID"))
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	// The stream outlives the server's write timeout and the request
	// timeout: it ends when the client, the feed or the server does.
	_ = out.rc.SetWriteDeadline(time.Time{})
	hdr := w.Header()
	hdr["Content-Type"] = []string{"text/event-stream"}
	hdr["Cache-Control"] = noStore
	hdr["X-Accel-Buffering"] = []string{"no"}
	w.WriteHeader(http.StatusOK)
	out.retry(streamRetry)
	for _, ev := range first {
		out.event(ev.id, ev.name, ev.data)
	}
	if out.flush() != nil {
		return
	}

	heartbeat := time.NewTicker(h.heartbeat)
	defer heartbeat.Stop()
	// The feed delivers a batch at most once per seatfeed.Config.Interval,
	// however fast seats change, so each batch is written at once: a
	// thousand streams cost a thousand writes per interval, not per change.
	for {
		select {
		case batch, open := <-sub.C:
			if !open {
				if sub.Lagged() {
					out.event("", "resync", []byte(`{"reason":"too slow: reconnect for a fresh snapshot"}`))
				}
				_ = out.flush()
				return
			}
			last = out.changes(batch, last)
			if out.buf.Len() > 0 && out.flush() != nil {
				return
			}
		case <-heartbeat.C:
			out.comment("keep-alive")
			if out.flush() != nil {
				return
			}
		case <-h.shutdown:
			// Reconnecting with Last-Event-ID to another instance loses
			// nothing.
			out.comment("server shutting down")
			_ = out.flush()
			return
		case <-ctx.Done():
			return
		}
	}
}

type sseEvent struct {
	id, name string
	data     []byte
}

// streamStart says where a stream begins: the changes after Last-Event-ID
// when the feed still has them all, else a snapshot of the map with the id
// of the last change before it was read.
func (h *handler) streamStart(ctx context.Context, scheduleID int64, lastEventID string) (string, []sseEvent, error) {
	if lastEventID != "" {
		missed, ok, err := h.feed.Since(ctx, scheduleID, lastEventID)
		if err != nil {
			return "", nil, err
		}
		if ok {
			events := make([]sseEvent, len(missed))
			last := lastEventID
			for i, ev := range missed {
				events[i] = sseEvent{id: ev.ID, name: "seat", data: ev.JSON}
				last = ev.ID
			}
			return last, events, nil
		}
	}
	head, err := h.feed.Head(ctx, scheduleID)
	if err != nil {
		return "", nil, err
	}
	data, err := h.snapshots.get(ctx, scheduleID, head, func(ctx context.Context) ([]byte, error) {
		seats, err := h.bookings.SeatMap(ctx, scheduleID)
		if err != nil {
			return nil, err
		}
		snapshot := seatMapResponse{ScheduleID: scheduleID, Seats: make([]seatResponse, len(seats))}
		for i, s := range seats {
			snapshot.Seats[i] = seatResponse{SeatID: s.ID, Status: string(s.Status)}
		}
		return json.Marshal(snapshot)
	})
	if err != nil {
		return "", nil, err
	}
	return head, []sseEvent{{id: head, name: "snapshot", data: data}}, nil
}

// eventWriter writes the text/event-stream format.
type eventWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// event appends one event; it allocates nothing once the buffer has grown.
func (e *eventWriter) event(id, name string, data []byte) {
	if id != "" {
		e.buf.WriteString("id: ")
		e.buf.WriteString(id)
		e.buf.WriteByte('\n')
	}
	e.buf.WriteString("event: ")
	e.buf.WriteString(name)
	e.buf.WriteString("\ndata: ")
	e.buf.Write(data)
	e.buf.WriteString("\n\n")
}

// changes appends the batch's changes that come after the id last, and
// returns the id of the last change sent. Past a stream's first moments
// every change is new, and the batch's encoding is shared with every
// other stream of the schedule.
func (e *eventWriter) changes(batch *seatfeed.Batch, last string) string {
	events := batch.Events
	if seatfeed.After(events[0].ID, last) {
		e.buf.Write(batch.Encoded(encodeSeatEvents))
		return events[len(events)-1].ID
	}
	// The stream began after some of these: its snapshot or catch-up has
	// them.
	for _, ev := range events {
		if seatfeed.After(ev.ID, last) {
			e.event(ev.ID, "seat", ev.JSON)
			last = ev.ID
		}
	}
	return last
}

// encodeSeatEvents renders changes as `seat` events.
func encodeSeatEvents(events []seatfeed.Event) []byte {
	var e eventWriter
	for _, ev := range events {
		e.event(ev.ID, "seat", ev.JSON)
	}
	return e.buf.Bytes()
}

func (e *eventWriter) comment(text string) { e.buf.WriteString(": " + text + "\n\n") }

func (e *eventWriter) retry(ms int) { e.buf.WriteString("retry: " + strconv.Itoa(ms) + "\n\n") }

// keptBuffer is the most an idle stream keeps of its buffer: a snapshot
// of a large schedule grows it to tens of KiB, and a thousand streams must
// not keep that.
const keptBuffer = 4 << 10

// flush writes what is buffered and pushes it to the client.
func (e *eventWriter) flush() error {
	if _, err := e.w.Write(e.buf.Bytes()); err != nil {
		return err
	}
	if e.buf.Cap() > keptBuffer {
		e.buf = bytes.Buffer{}
	} else {
		e.buf.Reset()
	}
	return e.rc.Flush()
}
