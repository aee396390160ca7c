package tracing

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newExporter returns the span exporter the environment names, as the
// OpenTelemetry specification's variables say: OTEL_TRACES_EXPORTER otlp
// (the default), console or none; for otlp, OTEL_EXPORTER_OTLP_PROTOCOL
// (or its _TRACES_ form) http/protobuf (the default) or grpc, and the
// other OTEL_EXPORTER_OTLP_* variables, which the SDK's clients read.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	switch name := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); name {
	case "", "otlp":
		protocol := cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "http/protobuf")
		switch protocol {
		case "http/protobuf":
			return newWireExporter(ctx, otlptracehttp.NewClient())
		case "grpc":
			return newWireExporter(ctx, otlptracegrpc.NewClient())
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

// wireExporter sends spans over OTLP as the SDK's OTLP exporter does,
// through the same client (endpoint, headers, TLS, compression, retries
// and timeouts from the OTEL_EXPORTER_OTLP_* variables), but writes the
// request's protobuf itself (resourceSpans): the SDK's exporter builds a
// proto struct for every span and attribute and marshals it by reflection,
// which made exporting a sixth of the service's CPU with every request
// traced. One thing differs: the clients' experimental self-observability
// (OTEL_GO_X_OBSERVABILITY) counts the spans of the proto structs it is
// given, and counts none here.
type wireExporter struct {
	client otlptrace.Client
	stop   sync.Once

	// encoded is the last batch's encoding, whose array the next batch
	// reuses (up to keptEncoding): made anew for each batch, it was the
	// second biggest part of what tracing allocated. The SDK's clients
	// have marshalled the request when UploadTraces returns; mu keeps two
	// exports from writing it at once (the batch processor exports one
	// batch at a time, other processors may not).
	mu      sync.Mutex
	encoded []byte
}

// keptEncoding bounds the encoding an exporter keeps between batches.
const keptEncoding = 4 << 20

func newWireExporter(ctx context.Context, client otlptrace.Client) (*wireExporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &wireExporter{client: client}, nil
}

func (e *wireExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	batch, encoded := resourceSpans(e.encoded, spans)
	if cap(encoded) <= keptEncoding {
		e.encoded = encoded
	}
	if len(batch) == 0 {
		return nil
	}
	if err := e.client.UploadTraces(ctx, batch); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client once; the provider has flushed its spans
// before it calls it.
func (e *wireExporter) Shutdown(ctx context.Context) error {
	var err error
	e.stop.Do(func() { err = e.client.Stop(ctx) })
	return err
}

// discard is OTEL_TRACES_EXPORTER=none's exporter.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
