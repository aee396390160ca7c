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
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

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
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
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

// withScope gives every request its scope: an id (echoed in X-Request-Id,
// put into problem bodies and log lines) and the logger for the causes of
// its 5xx answers, in the request's requestContext.
func withScope(log *slog.Logger) func(http.Handler) http.Handler {
	ids := newRequestIDs()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("X-Request-Id")
			if !validRequestID(id) {
				id = ids.id()
			}
			c := newRequestContext(r.Context(), id, problem.Scope{Log: log})
			w.Header()["X-Request-Id"] = c.idHeader[:]
			next.ServeHTTP(w, r.WithContext(c))
		})
	}
}

// withTimeout bounds a request's work, so that a stalled dependency ends
// in 503 rather than a hung client: the request's requestContext gets the
// deadline (a timer only if something waits on it).
func withTimeout(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, ok := r.Context().(*requestContext); ok && c.deadline.IsZero() {
				c.setDeadline(timeout)
				defer c.release()
				next.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// logRequests writes one structured line per request, and tells observer.
// It never logs headers or bodies, so tokens cannot leak into logs.
func logRequests(log *slog.Logger, out io.Writer, observer Observer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			var ww answerWriter
			if c, ok := r.Context().(*requestContext); ok {
				c.writer.ResponseWriter = w
				ww = &c.writer
			} else {
				ww = middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			}
			next.ServeHTTP(ww, r)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			scope := problem.ScopeFrom(r.Context())
			line := accessLine{at: start, id: scope.ID, method: r.Method, path: r.URL.Path,
				status: status, code: scope.Code, bytes: ww.BytesWritten(), duration: time.Since(start)}
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			observer.Request(r.Method, route, status, scope.Code, line.duration)
			line.log(r.Context(), log, out)
		})
	}
}

// answerWriter is a writer that records the answer's status and size.
type answerWriter interface {
	http.ResponseWriter
	Status() int
	BytesWritten() int
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
