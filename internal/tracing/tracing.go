// Package tracing is the service's OpenTelemetry tracing, whole: the SDK's
// tracer provider configured by the standard OTEL_* variables (Open),
// whose tracer makes every span and whose batch span processor and OTLP
// exporter send them, the propagators of incoming trace context
// (Propagator), and Tracing, which the app opens once and asks for each
// thing it wires: the HTTP handler's server spans and their route names,
// the pool's and the Redis clients' spans, the group writes' and the lock
// port's spans.
//
// Tracing is off unless the environment asks for it (config decides). Off,
// nothing of this package is in the way of a request: the app wraps neither its handler nor its pools, its
// Redis clients nor its lock client, and the global tracer provider stays
// OpenTelemetry's no-op one.
package tracing

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ServiceName is the service.name of the spans unless OTEL_SERVICE_NAME
// (or service.name in OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const ServiceName = "seatlock"

// ScopeName is the instrumentation scope of the service's own spans.
const ScopeName = "github.com/seatlock/seatlock"

// ShutdownTimeout bounds the flush of the spans still buffered when the
// service stops.
const ShutdownTimeout = 5 * time.Second

// newProvider returns the SDK's tracer provider as the OTEL_* variables
// configure it, and its sampler, which the server spans ask first: the
// exporter by OTEL_TRACES_EXPORTER (otlp, the default; console; none) and
// OTEL_EXPORTER_OTLP_* (newExporter), the sampler by OTEL_TRACES_SAMPLER
// and OTEL_TRACES_SAMPLER_ARG (samplerFromEnv; the SDK's default:
// parentbased_always_on), the batching by OTEL_BSP_*, the resource by
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Shut it down to flush.
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

// Propagator reads and writes W3C trace context (traceparent, tracestate)
// and baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// recording tells whether ctx carries a span being recorded: one the
// sampler kept.
func recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }
