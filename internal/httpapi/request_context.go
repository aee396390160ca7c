package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// requestContext is what the edge keeps of one request, made in one
// allocation by withScope: the request's context, carrying its scope; the
// router's state; the X-Request-Id header's value; and the writer that
// records the answer for the request log. It replaces two
// context.WithValue (the scope's and the router's), the router's copy of
// the request and a wrapped writer per request.
type requestContext struct {
	context.Context
	scope    problem.Scope
	idHeader [1]string
	writer   recordingWriter
	// route is the router's state (chi.RouteContext), set by withScope.
	route *chi.Context
}

// newRequestContext returns the state of a request with the scope's id.
func newRequestContext(parent context.Context, id string, scope problem.Scope) *requestContext {
	c := &requestContext{Context: parent, scope: scope}
	c.scope.ID = id
	c.idHeader[0] = id
	return c
}

// Value answers the scope and the route itself, other keys from the
// parent.
func (c *requestContext) Value(key any) any {
	if problem.IsScopeKey(key) {
		return &c.scope
	}
	if key == chi.RouteCtxKey && c.route != nil {
		return c.route
	}
	return c.Context.Value(key)
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
