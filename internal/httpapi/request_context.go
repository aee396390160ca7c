package httpapi

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// requestContext is what the edge keeps of one request, made in one
// allocation by withScope: the request's context, carrying its scope and,
// once withTimeout sets it, its deadline; the router's state; the
// X-Request-Id header's value; and the writer that records the answer for
// the request log. It replaces two context.WithValue (the scope's and the
// router's), the router's copy of the request, a context.WithTimeout (with
// its timer and its entry in the server's context) and a wrapped writer
// per request: on the hot seat, which answers from memory, those were a
// fifth of the edge's allocations.
//
// The deadline is lazy: a timer is armed (context.WithDeadline) only when
// something asks for Done, as a store call does; Err and Deadline answer
// from the clock until then. A request answered from memory never arms
// one.
type requestContext struct {
	parent   context.Context
	scope    problem.Scope
	idHeader [1]string
	writer   recordingWriter
	// route is the router's state (chi.RouteContext), set by withScope.
	route *chi.Context

	// deadline is zero outside withTimeout (the streams have none); it
	// is set before the request's handler runs, and never after.
	deadline time.Time
	mu       sync.Mutex
	armed    atomic.Pointer[armedDeadline]
	released atomic.Bool
}

type armedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// newRequestContext returns the state of a request with the scope's id.
func newRequestContext(parent context.Context, id string, scope problem.Scope) *requestContext {
	c := &requestContext{parent: parent, scope: scope}
	c.scope.ID = id
	c.idHeader[0] = id
	return c
}

// setDeadline bounds the request's work from now on; release ends it.
func (c *requestContext) setDeadline(timeout time.Duration) {
	c.deadline = time.Now().Add(timeout)
}

// release ends the context, as the cancel of context.WithTimeout does, once
// the handler has returned: whatever still holds it sees it canceled.
func (c *requestContext) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released.Store(true)
	if a := c.armed.Load(); a != nil {
		a.cancel()
	}
}

// arm makes the deadline's timer, once.
func (c *requestContext) arm() *armedDeadline {
	if a := c.armed.Load(); a != nil {
		return a
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.armed.Load(); a != nil {
		return a
	}
	ctx, cancel := context.WithDeadline(c.parent, c.deadline)
	if c.released.Load() {
		cancel()
	}
	a := &armedDeadline{ctx: ctx, cancel: cancel}
	c.armed.Store(a)
	return a
}

func (c *requestContext) Deadline() (time.Time, bool) {
	d, ok := c.parent.Deadline()
	if c.deadline.IsZero() || ok && d.Before(c.deadline) {
		return d, ok
	}
	return c.deadline, true
}

func (c *requestContext) Done() <-chan struct{} {
	if c.deadline.IsZero() {
		return c.parent.Done()
	}
	return c.arm().ctx.Done()
}

func (c *requestContext) Err() error {
	if c.deadline.IsZero() {
		return c.parent.Err()
	}
	if a := c.armed.Load(); a != nil {
		return a.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.released.Load() {
		return context.Canceled
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// Value answers the scope itself; other keys go to the armed deadline's
// context once there is one, so that context.Cause and this context's
// children see the timer's, else to the parent. Value never arms the
// timer: the request log asks for the route after every request. So
// context.Cause of a request context that nothing waited on is its
// parent's (nil, unless the client went away), whatever Err says.
func (c *requestContext) Value(key any) any {
	if problem.IsScopeKey(key) {
		return &c.scope
	}
	if key == chi.RouteCtxKey && c.route != nil {
		return c.route
	}
	if a := c.armed.Load(); a != nil {
		return a.ctx.Value(key)
	}
	return c.parent.Value(key)
}

// recordingWriter records an answer's status and size for the request log.
type recordingWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.status == 0 && (status < 100 || status > 199 || status == http.StatusSwitchingProtocols) {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Flush sends what is buffered (the live seat map's events), when the
// server's writer can.
func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the server's writer.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recordingWriter) Status() int       { return w.status }
func (w *recordingWriter) BytesWritten() int { return w.bytes }
