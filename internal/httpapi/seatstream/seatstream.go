// Package seatstream serves a schedule's seat map live, as Server-Sent
// Events (GET /schedules/{id}/seats/events). A stream lives as long as its
// client, the feed or the server does, so it is mounted apart from the
// routes the request timeout bounds.
package seatstream

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/httpapi/sse"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// Images is what the seat map's GET and streams need of this instance's
// images of the schedules' seats (seatmap.Images).
type Images interface {
	Image(ctx context.Context, schedule reservation.Schedule) (*seatmap.Image, error)
}

// Feed is what the live seat map needs of the seat feed.
type Feed interface {
	Subscribe(ctx context.Context, scheduleID int64, buffer int) (*seatfeed.Subscription, error)
	Head(ctx context.Context, scheduleID int64) (string, error)
	Since(ctx context.Context, scheduleID int64, afterID string) ([]seatfeed.Event, bool, error)
}

// Defaults of Options.
const (
	DefaultHeartbeat  = 15 * time.Second
	DefaultMaxStreams = 5000
	// streamBuffer is how many batches of changes (each what one read of
	// the feed found, up to 512) a stream may fall behind before it is
	// ended with a resync event.
	streamBuffer = 64
)

var (
	errTooManyStreams = &problem.Error{Status: http.StatusServiceUnavailable, Code: "too_many_streams", Title: "Too many streams",
		Detail:     "This instance serves as many live seat maps as it may; retry after the time in Retry-After.",
		RetryAfter: 5 * time.Second}
	errNoFeed = &problem.Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Title: "Service unavailable",
		Detail: "The live seat map needs Redis, which this instance is not configured with.", RetryAfter: problem.Unavailable.RetryAfter}
)

// Options are a Handler's dependencies.
type Options struct {
	// Feed delivers the changes; nil answers every stream 503.
	Feed Feed
	// Schedule answers whether a schedule exists (an error, written as a
	// problem, when not), before a stream is opened for it, and where its
	// seats are, for the seat events. A schedule's layout never changes:
	// a batch of events is encoded once for every stream of the schedule.
	Schedule func(ctx context.Context, scheduleID int64) (reservation.Schedule, error)
	// Images are the images the streams' first events show, rendered by
	// Maps, which shares them with the seat map's GET.
	Images Images
	Maps   *seatmap.Maps
	// MaxStreams caps the open streams (DefaultMaxStreams when zero);
	// past it, 503 too_many_streams.
	MaxStreams int
	// Heartbeat is how often an idle stream gets a comment
	// (DefaultHeartbeat when zero).
	Heartbeat time.Duration
	// Shutdown, once closed, ends every open stream: the server is
	// shutting down and would otherwise wait for them.
	Shutdown <-chan struct{}
	// Streams is told the number of open streams each time it changes.
	Streams func(open int64)
}

// Handler serves the live seat maps of one instance.
type Handler struct {
	opts Options
	open atomic.Int64
}

// New returns a Handler.
func New(opts Options) *Handler {
	opts.MaxStreams = cmp.Or(opts.MaxStreams, DefaultMaxStreams)
	opts.Heartbeat = cmp.Or(opts.Heartbeat, DefaultHeartbeat)
	return &Handler{opts: opts}
}

func (h *Handler) enter() bool {
	n := h.open.Add(1)
	if n > int64(h.opts.MaxStreams) {
		h.open.Add(-1)
		return false
	}
	h.opts.Streams(n)
	return true
}

func (h *Handler) leave() { h.opts.Streams(h.open.Add(-1)) }

// Serve streams schedule id's seat map as Server-Sent Events: first a
// `snapshot` (the whole map in the form ?form= asks for, with the id of
// the last change it includes),
// then a `seat` event per change made on any instance. A client that
// reconnects with Last-Event-ID gets the changes it missed, or a fresh
// snapshot when they are no longer kept. A comment every heartbeat keeps
// idle connections open through proxies. A client that falls streamBuffer
// batches of changes behind gets a `resync` event and is disconnected: it
// never slows the bookings.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, id int64) {
	if h.opts.Feed == nil {
		problem.Write(w, r, errNoFeed)
		return
	}
	ctx := r.Context()
	form, err := seatmap.ParseForm(r.URL.Query()["form"])
	if err != nil {
		problem.Write(w, r, err)
		return
	}
	schedule, err := h.opts.Schedule(ctx, id)
	if err != nil {
		problem.Write(w, r, err)
		return
	}
	if r.Method == http.MethodHead {
		// The stream's headers, and no stream: a HEAD has no body to
		// wait in.
		sse.Start(w)
		return
	}
	if !h.enter() {
		problem.Write(w, r, errTooManyStreams)
		return
	}
	defer h.leave()

	// Subscribe before reading where to start, so that no change falls
	// between the two; changes already sent are skipped by id.
	sub, err := h.opts.Feed.Subscribe(ctx, id, streamBuffer)
	if err != nil {
		problem.Write(w, r, err)
		return
	}
	defer sub.Close()
	last, first, err := h.streamStart(ctx, schedule, r.Header.Get("Last-Event-ID"), form)
	if err != nil {
		problem.Write(w, r, err)
		return
	}
	out, layout := sse.Start(w), schedule.Layout()
	for _, ev := range first {
		if ev.name == "snapshot" {
			if out.Shared(ev.id, ev.name, ev.data) != nil {
				return
			}
			continue
		}
		out.Event(ev.id, ev.name, ev.data)
	}
	if out.Flush() != nil {
		return
	}

	heartbeat := time.NewTicker(h.opts.Heartbeat)
	defer heartbeat.Stop()
	// The feed delivers a batch at most once per seatfeed.Config.Interval,
	// however fast seats change, so each batch is written at once: a
	// thousand streams cost a thousand writes per interval, not per change.
	for {
		select {
		case batch, open := <-sub.C:
			if !open {
				if sub.Lagged() {
					out.Event("", "resync", []byte(`{"reason":"too slow: reconnect for a fresh snapshot"}`))
				}
				_ = out.Flush()
				return
			}
			last = changes(out, batch, last, layout)
			if out.Flush() != nil {
				return
			}
		case <-heartbeat.C:
			out.Comment("keep-alive")
			if out.Flush() != nil {
				return
			}
		case <-h.opts.Shutdown:
			// Reconnecting with Last-Event-ID to another instance loses
			// nothing.
			out.Comment("server shutting down")
			_ = out.Flush()
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
// when the feed still has them all, else a snapshot of the map in form
// with the id of the last change it includes, and the changes after that
// one the feed has already: the image may not have taken in the latest
// when the stream subscribed.
func (h *Handler) streamStart(ctx context.Context, schedule reservation.Schedule, lastEventID string, form seatmap.Form) (string, []sseEvent, error) {
	scheduleID, layout := schedule.ID(), schedule.Layout()
	if lastEventID != "" {
		last, events, ok, err := h.since(ctx, scheduleID, lastEventID, layout)
		if err != nil || ok {
			return last, events, err
		}
	}
	image, err := h.opts.Images.Image(ctx, schedule)
	if err != nil {
		return "", nil, err
	}
	head := image.LastEvent()
	if head == "" {
		// An image listed from PostgreSQL (the feed could not be
		// followed when it was made) knows no position: the feed's head,
		// read before the map, stands for it.
		if head, err = h.opts.Feed.Head(ctx, scheduleID); err != nil {
			return "", nil, err
		}
	}
	snapshot := h.opts.Maps.Render(image, form, false)
	if snapshot.LastEvent != "" {
		head = snapshot.LastEvent
	}
	events := []sseEvent{{id: head, name: "snapshot", data: bytes.TrimSuffix(snapshot.Body, []byte("\n"))}}
	last, missed, ok, err := h.since(ctx, scheduleID, head, layout)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		return head, events, nil
	}
	return last, append(events, missed...), nil
}

// since returns the changes after afterID as seat events, and the id of
// the last one (afterID when none); ok is false when the feed no longer
// has them all.
func (h *Handler) since(ctx context.Context, scheduleID int64, afterID string, layout reservation.Layout) (string, []sseEvent, bool, error) {
	missed, ok, err := h.opts.Feed.Since(ctx, scheduleID, afterID)
	if err != nil || !ok {
		return afterID, nil, false, err
	}
	events := make([]sseEvent, len(missed))
	last := afterID
	for i, ev := range missed {
		events[i] = sseEvent{id: ev.ID, name: "seat", data: seatEvent(ev, layout)}
		last = ev.ID
	}
	return last, events, true, nil
}

// changes buffers to out the batch's changes that come after the id
// last, and returns the id of the last change sent. Past a stream's first
// moments every change is new, and the batch's encoding is shared with
// every other stream of the schedule.
func changes(out *sse.Writer, batch *seatfeed.Batch, last string, layout reservation.Layout) string {
	events := batch.Events
	if seatfeed.After(events[0].ID, last) {
		out.Events(batch.Encoded(func(events []seatfeed.Event) []byte { return encodeSeatEvents(events, layout) }))
		return events[len(events)-1].ID
	}
	// The stream began after some of these: its snapshot or catch-up has
	// them.
	for _, ev := range events {
		if seatfeed.After(ev.ID, last) {
			out.Event(ev.ID, "seat", seatEvent(ev, layout))
			last = ev.ID
		}
	}
	return last
}

// encodeSeatEvents renders changes as `seat` events.
func encodeSeatEvents(events []seatfeed.Event, layout reservation.Layout) []byte {
	var b []byte
	for _, ev := range events {
		b = sse.AppendEvent(b, ev.ID, "seat", seatEvent(ev, layout))
	}
	return b
}

// seatEvent is a change as its `seat` event carries it: the seat, its new
// status and where it is (seatmap.AppendSeat).
func seatEvent(ev seatfeed.Event, layout reservation.Layout) []byte {
	place, _ := layout.Place(ev.SeatID)
	return seatmap.AppendSeat(make([]byte, 0, 96), ev.SeatID, ev.Status, place)
}
