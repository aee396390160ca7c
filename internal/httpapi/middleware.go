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

	"github.com/seatlock/seatlock/internal/auth"
)

type ctxKey int

const scopeKey ctxKey = 0

// requestScope is what the middleware learns about a request: one value in
// its context, filled in as the request goes (authenticate adds the
// principal), so that each middleware does not copy the request again.
type requestScope struct {
	id        string
	principal auth.Principal
	// code is the problem code of the answer, for the request log.
	code string
}

func scopeFrom(ctx context.Context) *requestScope {
	s, _ := ctx.Value(scopeKey).(*requestScope)
	if s == nil {
		return &requestScope{}
	}
	return s
}

func requestIDFrom(ctx context.Context) string { return scopeFrom(ctx).id }

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
	return g.prefix + strconv.FormatUint(g.next.Add(1), 36)
}

// withScope gives every request its scope (an id, echoed in X-Request-Id,
// put into problem bodies and log lines) and bounds its work by timeout, so
// a stalled dependency ends in 503 rather than a hung client; a stream
// (unbounded(r)) is not bounded.
func withScope(timeout time.Duration, unbounded func(*http.Request) bool) func(http.Handler) http.Handler {
	ids := newRequestIDs()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get("X-Request-Id")
			if !validRequestID(id) {
				id = ids.id()
			}
			w.Header()["X-Request-Id"] = []string{id}
			ctx := context.WithValue(r.Context(), scopeKey, &requestScope{id: id})
			if !unbounded(r) {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// logRequests writes one structured line per request, and tells observer. It never logs headers
// or bodies, so tokens cannot leak into logs.
// With out set, the lines are written there by hand (accessLine), in the
// format log's JSON handler would give them.
func logRequests(log *slog.Logger, out io.Writer, observer Observer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			scope := scopeFrom(r.Context())
			line := accessLine{at: start, id: scope.id, method: r.Method, path: r.URL.Path,
				status: status, code: scope.code, bytes: ww.BytesWritten(), duration: time.Since(start)}
			route := ""
			if rc := chi.RouteContext(r.Context()); rc != nil {
				route = rc.RoutePattern()
			}
			observer.Request(r.Method, route, status, scope.code, line.duration)
			if out != nil {
				line.writeTo(out)
				return
			}
			log.LogAttrs(r.Context(), slog.LevelInfo, "request", line.attrs()...)
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
					slog.String("request_id", requestIDFrom(r.Context())),
					slog.Any("panic", rec), slog.String("stack", string(debug.Stack())))
				writeProblem(w, r, errInternal)
			}()
			next.ServeHTTP(w, r)
		})
	}
}
