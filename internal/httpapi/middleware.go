package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// A client-supplied X-Request-Id is kept only if it is short and plain, so
// it cannot forge log lines.
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'a' || 'z' < c) && (c < 'A' || 'Z' < c) && (c < '0' || '9' < c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// requestIDs makes request ids: a random prefix per process and a counter,
// unique without a random read per request.
type requestIDs struct {
	prefix string
	next   atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

func (g *requestIDs) id() string {
	b := make([]byte, 0, 48)
	b = append(b, g.prefix...)
	return string(strconv.AppendUint(b, g.next.Add(1), 36))
}

// scoped is the API's handler: the router, every request given its scope
// first: an id (echoed in X-Request-Id, put into problem bodies and log
// lines) and the logger for the causes of its 5xx answers, in the
// request's requestContext. Once the request is answered it writes its
// access line, and tells observer; it never logs headers or bodies, so
// tokens cannot leak into logs.
//
// It wraps the router rather than running as its middleware: the
// requestContext also carries the router's routing state, which the router
// would otherwise add in a context of its own and a second copy of the
// request (chi.Mux takes the state it finds in the request's context).
// It is the router otherwise (chi.Routes, for chi.Walk).
type scoped struct {
	*chi.Mux
	ids      *requestIDs
	log      *slog.Logger
	out      io.Writer
	observer Observer
}

func withScope(router *chi.Mux, log *slog.Logger, out io.Writer, observer Observer) *scoped {
	return &scoped{Mux: router, ids: newRequestIDs(), log: log, out: out, observer: observer}
}

func (s *scoped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = s.ids.id()
	}
	c := newRequestContext(r.Context(), id, problem.Scope{Log: s.log})
	route := routeContexts.Get().(*chi.Context)
	route.Reset()
	route.Routes = s.Mux
	c.route = route
	w.Header()["X-Request-Id"] = c.idHeader[:]
	c.writer.ResponseWriter = w
	r = r.WithContext(c)
	s.Mux.ServeHTTP(&c.writer, r)
	status := c.writer.Status()
	if status == 0 {
		status = http.StatusOK
	}
	line := accessLine{at: start, id: id, method: r.Method, path: r.URL.Path,
		status: status, code: c.scope.Code, bytes: c.writer.BytesWritten(), duration: time.Since(start)}
	s.observer.Request(r.Method, route.RoutePattern(), status, c.scope.Code, line.duration)
	line.log(c, s.log, s.out)
	// As chi.Mux does with its own: whatever outlives the request (a
	// detached context) must not ask for its route.
	routeContexts.Put(route)
}

// routeContexts are the routers' routing states, reused as chi.Mux reuses
// its own.
var routeContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// withTimeout bounds a request's work, so that a stalled dependency ends
// in 503 rather than a hung client: the request's requestContext (made by
// withScope, before the router) gets the deadline, a timer
// only if something waits on it.
func withTimeout(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, ok := r.Context().(*requestContext)
			if !ok {
				// A middleware between withScope and this one wrapped the
				// context: bounded the plain way.
				ctx, cancel := context.WithTimeout(r.Context(), timeout)
				defer cancel()
				next.ServeHTTP(w, r.WithContext(ctx))
				return
			}
			c.setDeadline(timeout)
			defer c.release()
			next.ServeHTTP(w, r)
		})
	}
}

// recoverPanics turns a handler panic into a generic 500 and a logged stack.
func recoverPanics(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				rec := recover()
				if rec == nil {
					return
				}
				if rec == http.ErrAbortHandler {
					panic(rec) // the server's own signal to drop the connection
				}
				log.ErrorContext(r.Context(), "panic",
					slog.String("request_id", problem.ScopeFrom(r.Context()).ID),
					slog.Any("panic", rec), slog.String("stack", string(debug.Stack())))
				problem.Write(w, r, problem.Internal)
			}()
			next.ServeHTTP(w, r)
		})
	}
}
