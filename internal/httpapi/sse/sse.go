// Package sse writes Server-Sent Events (text/event-stream), for the live
// seat maps (seatstream) and the ticket streams (GET /queue/{ticket}/events)
// alike.
package sse

import (
	"net/http"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// keptBuffer is the most an idle stream keeps of its buffer: a snapshot
// of a large schedule grows it to tens of KiB, and a thousand streams must
// not keep that.
const keptBuffer = 4 << 10

// Writer writes one stream: what it is given is buffered, and sent by
// Flush.
type Writer struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf []byte
}

// Start answers 200 with the headers of a stream (its type, no caching,
// and no buffering by a proxy in front), lifts the server's write timeout
// (a stream ends when its client, its source or the server does), and
// buffers the reconnection delay it suggests.
func Start(w http.ResponseWriter) *Writer {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	hdr := w.Header()
	hdr["Content-Type"] = []string{"text/event-stream"}
	hdr["Cache-Control"] = problem.NoStore
	hdr["X-Accel-Buffering"] = []string{"no"}
	w.WriteHeader(http.StatusOK)
	return &Writer{w: w, rc: rc, buf: []byte("retry: 1000\n\n")} // EventSource reconnects after 1 s
}

// AppendEvent appends one event, without an id line when id is ""; it
// allocates nothing once b has room.
func AppendEvent(b []byte, id, name string, data []byte) []byte {
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(append(append(b, "event: "...), name...), "\ndata: "...), data...)
	return append(b, "\n\n"...)
}

// Event buffers one event (AppendEvent).
func (s *Writer) Event(id, name string, data []byte) { s.buf = AppendEvent(s.buf, id, name, data) }

// Events buffers events AppendEvent encoded already (for many streams at
// once).
func (s *Writer) Events(encoded []byte) { s.buf = append(s.buf, encoded...) }

// Comment buffers a comment.
func (s *Writer) Comment(text string) {
	s.buf = append(append(append(s.buf, ": "...), text...), "\n\n"...)
}

// Shared writes one event whose data is shared with other streams (a
// snapshot, a stadium's hundreds of KiB): straight to the connection, not
// copied into the stream's buffer, so that a thousand streams opening at
// once do not each hold a copy.
func (s *Writer) Shared(id, name string, data []byte) error {
	s.buf = AppendEvent(s.buf, id, name, nil)
	// The blank line that ends the event comes after the data.
	if _, err := s.w.Write(s.buf[:len(s.buf)-2]); err != nil {
		return err
	}
	if _, err := s.w.Write(data); err != nil {
		return err
	}
	s.buf = append(s.buf[:0], "\n\n"...)
	return nil
}

// Flush writes what is buffered, if anything, and pushes it to the
// client.
func (s *Writer) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	s.buf = s.buf[:0]
	if cap(s.buf) > keptBuffer {
		s.buf = nil
	}
	return s.rc.Flush()
}
