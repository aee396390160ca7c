// Package tracing is the service's OpenTelemetry tracing: the SDK's tracer
// provider, batch span processor and OTLP exporter as the OTEL_* variables
// configure them (Open), and Tracing, which the app asks for each thing it
// wires: the server spans and their route names, the pool's, the Redis
// clients', the group writes' and the lock port's spans. Off (config
// decides), nothing of it is in the way of a request.
package tracing

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

const (
	// ServiceName is the spans' service.name unless OTEL_SERVICE_NAME (or
	// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
	ServiceName = "seatlock"
	// ScopeName is the instrumentation scope of the service's own spans.
	ScopeName = "github.com/seatlock/seatlock"
	// ShutdownTimeout bounds the flush of the spans buffered at the end.
	ShutdownTimeout = 5 * time.Second
)

// Tracing is the service's tracing as the app wires it: on with a tracer
// provider, off (the zero value) otherwise, when every method leaves what
// it is given as it is.
type Tracing struct {
	tp trace.TracerProvider
	// sampler is the provider's when Open built it (see serverSpans).
	sampler sdktrace.Sampler
	flush   func()
}

// Open turns tracing on with the provider a test gave, or, when requested
// (config.Config.Tracing), with the SDK's (newProvider), installed as the
// global provider and propagator too; else it stays off.
func Open(ctx context.Context, requested bool, given trace.TracerProvider) (Tracing, error) {
	if given != nil {
		return Tracing{tp: given}, nil
	}
	if !requested {
		return Tracing{}, nil
	}
	tp, sampler, err := newProvider(ctx)
	if err != nil {
		return Tracing{}, err
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator())
	return Tracing{tp: tp, sampler: sampler, flush: func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}}, nil
}

// newProvider returns the SDK's tracer provider and its sampler, which the
// server spans ask first: the exporter as newExporter reads it, the
// sampler as samplerFromEnv does, the batching by OTEL_BSP_*, the resource
// by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func newProvider(ctx context.Context) (*sdktrace.TracerProvider, sdktrace.Sampler, error) {
	sampler, err := samplerFromEnv()
	if err != nil {
		return nil, nil, err
	}
	exporter, err := newExporter(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: exporter (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*): %w", err)
	}
	fromEnv, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", ServiceName)), fromEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler), sdktrace.WithIDGenerator(drawnIDs{}))
	return tp, sampler, nil
}

// newExporter returns the exporter OTEL_TRACES_EXPORTER names: otlp (the
// default), the SDK's OTLP exporter over OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL
// http/protobuf (the default) or grpc, configured by the other
// OTEL_EXPORTER_OTLP_* variables; console; or none.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	switch name := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); name {
	case "", "otlp":
		protocol := cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf")
		switch protocol {
		case "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		}
		return nil, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", protocol)
	case "console":
		return stdouttrace.New()
	case "none":
		return discard{}, nil
	default:
		return nil, fmt.Errorf("span exporter %q: want otlp, console or none", name)
	}
}

// discard is OTEL_TRACES_EXPORTER=none's exporter.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// Flush sends the spans the provider Open built still buffers; the app
// calls it last of all.
func (t Tracing) Flush() {
	if t.flush != nil {
		t.flush()
	}
}

func (t Tracing) on() bool { return t.tp != nil }

// PoolOptions traces the pool's statements with otelpgx.
func (t Tracing) PoolOptions() []postgres.PoolOption {
	if !t.on() {
		return nil
	}
	pgxTracer := otelpgx.NewTracer(otelpgx.WithTracerProvider(t.tp), otelpgx.WithQuerySpanNamePrefix())
	return []postgres.PoolOption{func(c *pgxpool.Config) { c.ConnConfig.Tracer = pgxTracer }}
}

// StoreOptions makes a span of each group write of bookings.
func (t Tracing) StoreOptions() []postgres.StoreOption {
	if !t.on() {
		return nil
	}
	return []postgres.StoreOption{postgres.WithTracer(t.tp.Tracer(ScopeName))}
}

// Redis traces client's commands, pipelines and dials (redisSpans), never
// their arguments (they carry user ids).
func (t Tracing) Redis(client redis.UniversalClient) error {
	if !t.on() {
		return nil
	}
	return instrumentRedis(client, t.tp)
}

// Locker makes spans of the use cases' lock acquisitions, seals and
// releases (tracedLocker).
func (t Tracing) Locker(l reservation.SeatLocker) reservation.SeatLocker {
	if !t.on() {
		return l
	}
	return &tracedLocker{inner: l, tracer: t.tp.Tracer(ScopeName)}
}

// Routed names each request's span after its route
// (httpapi.Options.Routed; nil when off).
func (t Tracing) Routed() func(http.Handler) http.Handler {
	if !t.on() {
		return nil
	}
	return RouteNames
}

// Handler makes a server span of each request the sampler keeps
// (serverSpans).
func (t Tracing) Handler(h http.Handler) http.Handler {
	if !t.on() {
		return h
	}
	return newServerSpans(h, t.tp.Tracer(ScopeName), t.sampler, Propagator())
}

// Propagator reads and writes W3C trace context (traceparent, tracestate)
// and baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// recording tells whether ctx carries a span the sampler kept.
func recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }
