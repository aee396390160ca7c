package tracing

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/seatlock/seatlock/internal/lock"
)

// BenchmarkSampledRequest is what tracing adds to the hot seat's request:
// off, the handler alone; sampled, its server span with the route's name
// and a lock span refused as sealed, exported: as the SDK's spans through
// its batch processor and the wire exporter (sampled-sdk), and as the
// light spans the service makes (sampled-light).
func BenchmarkSampledRequest(b *testing.B) {
	ctx := context.Background()
	exporter, err := newWireExporter(ctx, marshalling{})
	if err != nil {
		b.Fatal(err)
	}
	sampler := sdktrace.ParentBased(sdktrace.AlwaysSample())
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithSampler(sampler),
		sdktrace.WithIDGenerator(drawnIDs{}))
	light := newLightTracer(marshalling{}, nil, sampler, tp)
	b.Cleanup(func() { _ = light.batcher.Shutdown(ctx); _ = tp.Shutdown(ctx) })
	for _, c := range []struct {
		name    string
		tracing Tracing
	}{
		{"off", Tracing{}},
		{"sampled-sdk", Tracing{tp: tp, own: tp.Tracer(ScopeName), sampler: sampler}},
		{"sampled-light", Tracing{tp: tp, own: light, sampler: sampler}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := hotSeatHandler(c.tracing)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusConflict {
					b.Fatalf("status %d, want 409", w.Code)
				}
			}
		})
	}
}

// hotSeatHandler answers every booking as the service answers a sealed
// seat's, through tr's lock client, router middleware and handler.
func hotSeatHandler(tr Tracing) http.Handler {
	locker := tr.Locker(sealedLocker{})
	r := chi.NewRouter()
	if routed := tr.Routed(); routed != nil {
		r.Use(routed)
	}
	r.Post("/reservations", func(w http.ResponseWriter, r *http.Request) {
		if _, err := locker.Acquire(r.Context(), "seat:1:1", lock.Options{TTL: 5 * time.Second}); !errors.Is(err, lock.ErrSealed) {
			http.Error(w, "want sealed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("X-Request-Id", "d6de6f6cad9b1299-1")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"type":"urn:seatlock:problem:seat_taken","status":409,"code":"seat_taken"}`))
	})
	return tr.Handler(r)
}

// sealedLocker refuses every key as sealed.
type sealedLocker struct{}

func (sealedLocker) Acquire(context.Context, string, lock.Options) (lock.Lease, error) {
	return nil, lock.ErrSealed
}

func (sealedLocker) AcquireAll(context.Context, []string, lock.Options) (lock.MultiLease, error) {
	return nil, lock.ErrSealed
}
