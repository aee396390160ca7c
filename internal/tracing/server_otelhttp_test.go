package tracing_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seatlock/seatlock/internal/tracing"
)

// TestSpanAsOtelhttpMadeIt: the server span of a sampled request has the
// name, kind, status and attributes otelhttp (which made it before, as
// Tracing.Handler configured it) gives the same request, so that
// dashboards and queries over those spans still hold.
func TestSpanAsOtelhttpMadeIt(t *testing.T) {
	for _, c := range []struct {
		method, target, body string
		header               map[string]string
		status               int
	}{
		{http.MethodPost, "/reservations", `{"scheduleId":1,"seatId":4}`, map[string]string{"User-Agent": "hammer/1"}, http.StatusOK},
		{http.MethodGet, "http://[::1]:18080/schedules/9/seats", "", map[string]string{"X-Forwarded-For": "198.51.100.7"}, http.StatusOK},
		{http.MethodDelete, "https://seats.example/reservations/12", "", nil, http.StatusServiceUnavailable},
		{"purge", "/reservations", "", nil, http.StatusMethodNotAllowed},
		{http.MethodGet, "/nowhere", "", nil, http.StatusNotFound},
	} {
		handler := func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Request-Id", "req-7")
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, `{"answer":1}`)
		}
		router := func(routed func(http.Handler) http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Use(routed)
			r.Post("/reservations", handler)
			r.Get("/schedules/{id}/seats", handler)
			r.Delete("/reservations/{id}", handler)
			r.MethodNotAllowed(handler)
			return r
		}

		tr, rec := recorded(t, sdktrace.AlwaysSample())
		serve(tr.Handler(router(tr.Routed())), c.method, c.target, c.body, c.header)
		ours := onlySpan(t, rec)

		before := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(before))
		serve(otelhttp.NewHandler(router(tracing.RouteNames), "http", otelhttp.WithTracerProvider(tp),
			otelhttp.WithPropagators(tracing.Propagator()),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method })),
			c.method, c.target, c.body, c.header)
		_ = tp.Shutdown(context.Background())
		theirs := before.Ended()[0]

		if ours.Name() != theirs.Name() || ours.SpanKind() != theirs.SpanKind() || ours.Status() != theirs.Status() {
			t.Errorf("%s %s: span %q %v %v, otelhttp's %q %v %v", c.method, c.target,
				ours.Name(), ours.SpanKind(), ours.Status(), theirs.Name(), theirs.SpanKind(), theirs.Status())
		}
		if got, want := attributes(ours), attributes(theirs); !slices.Equal(got, want) {
			t.Errorf("%s %s: attributes\n%s\nwant otelhttp's\n%s", c.method, c.target, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func attributes(s sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, kv := range s.Attributes() {
		out = append(out, string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(out)
	return out
}
