package tracing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/tracing"
)

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// recorded is a Tracing whose spans, started and ended, rec keeps, with
// sampler deciding which requests are kept.
func recorded(t *testing.T, sampler sdktrace.Sampler) (tracing.Tracing, *tracetest.SpanRecorder) {
	t.Helper()
	tr, _, rec := recordedWith(t, sampler)
	return tr, rec
}

// recordedWith is recorded, with the provider too, for a test that starts
// spans of its own (a sampled request's, a dropped one's).
func recordedWith(t *testing.T, sampler sdktrace.Sampler) (tracing.Tracing, *sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr, err := tracing.Open(context.Background(), false, tp)
	if err != nil {
		t.Fatal(err)
	}
	return tr, tp, rec
}

// routed is the service's shape: the traced handler around a chi router
// whose first middleware names the span (tracing.RouteNames).
func routed(tr tracing.Tracing, routes func(chi.Router)) http.Handler {
	r := chi.NewRouter()
	r.Use(tr.Routed())
	routes(r)
	return tr.Handler(r)
}

func serve(h http.Handler, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func onlySpan(t *testing.T, rec *tracetest.SpanRecorder) sdktrace.ReadOnlySpan {
	t.Helper()
	if started := rec.Started(); len(started) != 1 {
		t.Fatalf("%d spans started, want 1", len(started))
	}
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended, want 1", len(ended))
	}
	return ended[0]
}

// TestUnsampledRequestMakesNoSpan: a request the sampler drops starts no
// span (nothing reaches a span processor, so nothing is exported), and its
// handler sees the sampler's non-recording span, whose trace id the
// request's own calls can pass on.
func TestUnsampledRequestMakesNoSpan(t *testing.T) {
	tr, rec := recorded(t, sdktrace.NeverSample())
	var seen trace.Span
	h := routed(tr, func(r chi.Router) {
		r.Post("/reservations", func(w http.ResponseWriter, r *http.Request) {
			seen = trace.SpanFromContext(r.Context())
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		})
	})
	if w := serve(h, http.MethodPost, "/reservations", `{"seatId":1}`, nil); w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if n := len(rec.Started()); n != 0 {
		t.Errorf("an unsampled request started %d spans", n)
	}
	if seen == nil || seen.IsRecording() || !seen.SpanContext().IsValid() || seen.SpanContext().IsSampled() {
		t.Errorf("the handler's span is %+v; want the sampler's valid, unsampled, non-recording one", seen)
	}
}

// TestUnsampledCallerMakesNoSpan: with a parent-based sampler, a caller's
// traceparent that says "not sampled" makes no span, and the request goes
// on in the caller's trace.
func TestUnsampledCallerMakesNoSpan(t *testing.T) {
	tr, rec := recorded(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	var seen trace.SpanContext
	h := routed(tr, func(r chi.Router) {
		r.Get("/schedules/{id}", func(w http.ResponseWriter, r *http.Request) {
			seen = trace.SpanContextFromContext(r.Context())
		})
	})
	serve(h, http.MethodGet, "/schedules/7", "", map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-00"})
	if n := len(rec.Started()); n != 0 {
		t.Errorf("an unsampled caller's request started %d spans", n)
	}
	if seen.TraceID().String() != callerTrace || seen.IsSampled() {
		t.Errorf("the handler's span context is %v (sampled %v), want the caller's trace, unsampled", seen.TraceID(), seen.IsSampled())
	}
}

// TestSampledCallerMakesAChildSpan: a caller's sampled traceparent makes
// a server span in its trace, a child of its span, even when the sampler
// would drop a trace of the service's own.
func TestSampledCallerMakesAChildSpan(t *testing.T) {
	tr, rec := recorded(t, sdktrace.ParentBased(sdktrace.NeverSample()))
	h := routed(tr, func(r chi.Router) {
		r.Get("/schedules/{id}", func(w http.ResponseWriter, r *http.Request) {})
	})
	serve(h, http.MethodGet, "/schedules/7", "", map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"})
	span := onlySpan(t, rec)
	if got := span.SpanContext().TraceID().String(); got != callerTrace {
		t.Errorf("trace id %s, want the caller's %s", got, callerTrace)
	}
	if p := span.Parent(); p.SpanID().String() != callerSpan || !p.IsRemote() {
		t.Errorf("parent %v (remote %v), want the caller's span %s", p.SpanID(), p.IsRemote(), callerSpan)
	}
	if span.Name() != "GET /schedules/{id}" || span.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q of kind %v", span.Name(), span.SpanKind())
	}
}

// TestSampledRequestSpan: a sampled request's span is named after its
// route, a server span, with the HTTP attributes, the request id and the
// sizes read and written.
func TestSampledRequestSpan(t *testing.T) {
	tr, rec := recorded(t, sdktrace.AlwaysSample())
	h := routed(tr, func(r chi.Router) {
		r.Post("/schedules/{id}/holds", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Request-Id", "req-1")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"ok":true}`)
		})
	})
	serve(h, http.MethodPost, "http://seats.example:8080/schedules/3/holds", `{"seats":[1,2]}`,
		map[string]string{"User-Agent": "hammer/1", "X-Forwarded-For": "203.0.113.9, 10.0.0.1"})
	span := onlySpan(t, rec)
	if span.Name() != "POST /schedules/{id}/holds" || span.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q of kind %v", span.Name(), span.SpanKind())
	}
	if span.Parent().IsValid() {
		t.Errorf("a request without traceparent has parent %v", span.Parent())
	}
	for key, want := range map[attribute.Key]attribute.Value{
		"http.request.method":       attribute.StringValue("POST"),
		"http.route":                attribute.StringValue("/schedules/{id}/holds"),
		"http.response.status_code": attribute.IntValue(http.StatusCreated),
		"http.request.body.size":    attribute.IntValue(len(`{"seats":[1,2]}`)),
		"http.response.body.size":   attribute.IntValue(len(`{"ok":true}`)),
		"url.path":                  attribute.StringValue("/schedules/3/holds"),
		"url.scheme":                attribute.StringValue("http"),
		"server.address":            attribute.StringValue("seats.example"),
		"server.port":               attribute.IntValue(8080),
		"client.address":            attribute.StringValue("203.0.113.9"),
		"network.peer.address":      attribute.StringValue("192.0.2.1"),
		"network.peer.port":         attribute.IntValue(1234),
		"network.protocol.version":  attribute.StringValue("1.1"),
		"user_agent.original":       attribute.StringValue("hammer/1"),
		tracing.AttrRequestID:       attribute.StringValue("req-1"),
	} {
		if got := attr(span, key); got != want {
			t.Errorf("%s = %v, want %v", key, got.String(), want.String())
		}
	}
	if span.Status().Code != codes.Unset {
		t.Errorf("status %v, want unset", span.Status())
	}
}

// TestServerSpanStatus: only a 5xx marks the span failed; a 4xx is the
// caller's error, and an unmatched path keeps the method as its name.
func TestServerSpanStatus(t *testing.T) {
	for _, c := range []struct {
		path   string
		status int
		name   string
		want   codes.Code
	}{
		{"/fail", http.StatusServiceUnavailable, "GET /fail", codes.Error},
		{"/fail", http.StatusInternalServerError, "GET /fail", codes.Error},
		{"/fail", http.StatusConflict, "GET /fail", codes.Unset},
		{"/nowhere", http.StatusNotFound, "GET", codes.Unset},
	} {
		tr, rec := recorded(t, sdktrace.AlwaysSample())
		h := routed(tr, func(r chi.Router) {
			r.Get("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(c.status) })
		})
		serve(h, http.MethodGet, c.path, "", nil)
		span := onlySpan(t, rec)
		if span.Status().Code != c.want || span.Name() != c.name {
			t.Errorf("%d on %s: span %q status %v, want %q %v", c.status, c.path, span.Name(), span.Status().Code, c.name, c.want)
		}
		if got := attr(span, "http.response.status_code").AsInt64(); got != int64(c.status) {
			t.Errorf("%d on %s: http.response.status_code = %d", c.status, c.path, got)
		}
	}
}

// TestProbesMakeNoSpan: health, readiness and metrics requests are
// answered without a span, even when every request is sampled.
func TestProbesMakeNoSpan(t *testing.T) {
	tr, rec := recorded(t, sdktrace.AlwaysSample())
	h := routed(tr, func(r chi.Router) {
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			r.Get(p, func(w http.ResponseWriter, r *http.Request) {})
		}
	})
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		serve(h, http.MethodGet, p, "", nil)
	}
	if n := len(rec.Started()); n != 0 {
		t.Errorf("probes started %d spans", n)
	}
}

// TestSampledWriterKeepsFlusher: a sampled request's handler still finds
// the writer's optional interfaces (the live seat map flushes each event).
func TestSampledWriterKeepsFlusher(t *testing.T) {
	tr, rec := recorded(t, sdktrace.AlwaysSample())
	var flushed bool
	h := routed(tr, func(r chi.Router) {
		r.Get("/events", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "data: 1\n\n")
			flushed = http.NewResponseController(w).Flush() == nil
		})
	})
	w := serve(h, http.MethodGet, "/events", "", nil)
	if !flushed || !w.Flushed {
		t.Errorf("the handler could not flush (flushed %v, recorder %v)", flushed, w.Flushed)
	}
	if got := attr(onlySpan(t, rec), "http.response.body.size").AsInt64(); got != int64(len("data: 1\n\n")) {
		t.Errorf("http.response.body.size = %d", got)
	}
}

// TestSampledFlushSendsTheStatus: a flush before any write sends 200, and
// a status written after it (which net/http ignores) is not the span's.
func TestSampledFlushSendsTheStatus(t *testing.T) {
	tr, rec := recorded(t, sdktrace.AlwaysSample())
	h := routed(tr, func(r chi.Router) {
		r.Get("/events", func(w http.ResponseWriter, r *http.Request) {
			_ = http.NewResponseController(w).Flush()
			w.WriteHeader(http.StatusInternalServerError)
		})
	})
	serve(h, http.MethodGet, "/events", "", nil)
	span := onlySpan(t, rec)
	if got := attr(span, "http.response.status_code").AsInt64(); got != http.StatusOK || span.Status().Code != codes.Unset {
		t.Errorf("flushed first: http.response.status_code = %d, span status %v; want 200, unset", got, span.Status().Code)
	}
}

// TestTracingOffLeavesTheHandler: off, the handler is given back as it is.
func TestTracingOffLeavesTheHandler(t *testing.T) {
	tr, err := tracing.Open(context.Background(), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.NewServeMux()
	if got := tr.Handler(h); got != http.Handler(h) {
		t.Errorf("off, Handler wrapped the handler in a %T", got)
	}
}

// TestUnsampledRequestAllocations: with a provider a test gave, whose
// sampler the server spans cannot ask first, what a request the SDK's
// sampler drops costs the heap beyond the router's own is the decision's
// non-recording span and the two contexts that carry it (its request's
// and the span's): no attributes, no wrappers. With the service's own
// provider it costs nothing (TestDroppedRequestAllocations).
func TestUnsampledRequestAllocations(t *testing.T) {
	tr, _ := recorded(t, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0)))
	if extra := allocationsBeyondRouter(tr); extra > 3 {
		t.Errorf("an unsampled request allocates %.0f more than the bare router, want at most 3", extra)
	}
}

// allocationsBeyondRouter is how many more allocations a request costs
// through tr's handler and a router than through the router alone.
func allocationsBeyondRouter(tr tracing.Tracing) float64 {
	routes := func(r chi.Router) { r.Get("/schedules/{id}", func(w http.ResponseWriter, r *http.Request) {}) }
	bare := chi.NewRouter()
	routes(bare)
	traced := routed(tr, routes)
	req := httptest.NewRequest(http.MethodGet, "/schedules/7", nil)
	w := httptest.NewRecorder()
	allocs := func(h http.Handler) float64 { return testing.AllocsPerRun(200, func() { h.ServeHTTP(w, req) }) }
	return allocs(traced) - allocs(bare)
}

// TestInvalidUTF8IsReplaced: the strings a request brings (its path, user
// agent, forwarded address, request id) and a failed lock's message reach
// the spans as valid UTF-8, each bad byte a U+FFFD: the OTLP exporter
// would fail the whole batch of a span that is not.
func TestInvalidUTF8IsReplaced(t *testing.T) {
	tr, rec := recorded(t, sdktrace.AlwaysSample())
	locker := tr.Locker(failingLocker{})
	h := routed(tr, func(r chi.Router) {
		r.Get("/seats/{id}", func(w http.ResponseWriter, r *http.Request) {
			_, _ = locker.Acquire(r.Context(), "seat:1", lock.Options{TTL: time.Second})
			w.Header().Set("X-Request-Id", "req-\xff")
		})
	})
	serve(h, http.MethodGet, "/seats/a%ffb", "", map[string]string{"User-Agent": "ua\xfe\xff", "X-Forwarded-For": "\xc0"})
	for _, s := range rec.Ended() {
		var kvs []attribute.KeyValue
		kvs = append(kvs, s.Attributes()...)
		for _, e := range s.Events() {
			kvs = append(kvs, e.Attributes...)
		}
		for _, kv := range kvs {
			if v := kv.Value.String(); !utf8.ValidString(v) {
				t.Errorf("span %q: %s = %q, not UTF-8", s.Name(), kv.Key, v)
			}
		}
	}
	server := rec.Ended()[len(rec.Ended())-1]
	for key, want := range map[attribute.Key]string{"url.path": "/seats/a\uFFFDb", "user_agent.original": "ua\uFFFD",
		"client.address": "\uFFFD", tracing.AttrRequestID: "req-\uFFFD"} {
		if got := attr(server, key).AsString(); got != want {
			t.Errorf("%s = %q, want %q", key, got, want)
		}
	}
	if events := rec.Ended()[0].Events(); len(events) != 1 || !slices.Contains(events[0].Attributes,
		attribute.String("exception.message", "lost \uFFFD")) {
		t.Errorf("the lock span's events %v, want its error's message with U+FFFD", events)
	}
}

// failingLocker fails every acquisition with a message that is not UTF-8.
type failingLocker struct{}

func (failingLocker) Acquire(context.Context, string, lock.Options) (lock.Lease, error) {
	return nil, errors.New("lost \xff")
}

func (failingLocker) AcquireAll(context.Context, []string, lock.Options) (lock.MultiLease, error) {
	return nil, errors.New("lost \xff")
}
