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
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/seatlock/seatlock/internal/lock"
)

// BenchmarkSampledRequest is what tracing adds to the hot seat's request:
// off, the handler alone; sampled, its server span with the route's name
// and a lock span refused as sealed, batched and marshalled by the SDK's
// OTLP exporter.
func BenchmarkSampledRequest(b *testing.B) {
	ctx := context.Background()
	exporter, err := otlptrace.New(ctx, marshalling{})
	if err != nil {
		b.Fatal(err)
	}
	sampler := sdktrace.ParentBased(sdktrace.AlwaysSample())
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithSampler(sampler),
		sdktrace.WithIDGenerator(drawnIDs{}))
	b.Cleanup(func() { _ = tp.Shutdown(ctx) })
	for _, c := range []struct {
		name    string
		tracing Tracing
	}{
		{"off", Tracing{}},
		{"sampled", Tracing{tp: tp, sampler: sampler}},
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

// marshalling is an OTLP client that marshals what it is given to upload,
// as the SDK's clients do, and sends it nowhere.
type marshalling struct{}

func (marshalling) Start(context.Context) error { return nil }
func (marshalling) Stop(context.Context) error  { return nil }

func (marshalling) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	_, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: rs})
	return err
}
