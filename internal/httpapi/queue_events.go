package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/httpapi/sse"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// queueHeartbeat is how often an idle queue stream gets a comment.
const queueHeartbeat = 15 * time.Second

// DefaultMaxQueueStreams caps the open ticket streams of an instance when
// Options.MaxQueueStreams is 0: each is a goroutine and a connection, and
// a buyer past the cap polls instead.
const DefaultMaxQueueStreams = 20_000

var errTooManyQueueStreams = &problem.Error{Status: http.StatusServiceUnavailable, Code: "too_many_streams", Title: "Too many streams",
	Detail:     "This instance follows as many tickets live as it may; poll GET /queue/{ticket} instead, after the time in Retry-After.",
	RetryAfter: time.Second}

// ticketEvents streams the caller's ticket as Server-Sent Events: a
// `position` event with the ticket now and at each change (read at most
// waitroom.DefaultWatchEvery apart), then one `admitted` event with the
// admission, and the stream ends; a final state (expired, left) ends it
// too, after its `position` event. A queue deleted meanwhile ends it with
// no event: asking for the ticket then answers 404.
func (h *handler) ticketEvents(w http.ResponseWriter, r *http.Request) error {
	if h.room == nil {
		return waitroom.ErrTicketNotFound
	}
	if h.queueStreams.Add(1) > int64(h.maxQueueStreams) {
		h.queueStreams.Add(-1)
		return errTooManyQueueStreams
	}
	defer h.queueStreams.Add(-1)
	watch, t, err := h.room.Watch(r.Context(), chi.URLParam(r, "ticket"), principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	defer h.room.Unwatch(watch)
	out := sse.Start(w)
	if r.Method == http.MethodHead {
		return nil
	}
	heartbeat := time.NewTicker(queueHeartbeat)
	defer heartbeat.Stop()
	var last []byte
	for {
		data, _ := json.Marshal(toTicketResponse(t))
		if !bytes.Equal(data, last) {
			name := "position"
			if t.State == waitroom.Admitted {
				name = "admitted"
			}
			out.Event("", name, data)
			last = data
		}
		if out.Flush() != nil {
			return nil
		}
		if t.State == waitroom.Admitted || t.State.Final() {
			return nil
		}
		for next := false; !next; {
			select {
			case t2, open := <-watch.C:
				if !open {
					return nil
				}
				t, next = t2, true
			case <-heartbeat.C:
				out.Comment("keep-alive")
				next = true
			case <-h.shutdown:
				return nil
			case <-r.Context().Done():
				return nil
			}
		}
	}
}
