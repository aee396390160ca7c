package tracing

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// newExporter returns the span exporter the environment names, as the
// OpenTelemetry specification's variables say: OTEL_TRACES_EXPORTER otlp
// (the default), console or none; for otlp, the SDK's OTLP exporter over
// OTEL_EXPORTER_OTLP_PROTOCOL (or its _TRACES_ form) http/protobuf (the
// default) or grpc, configured by the other OTEL_EXPORTER_OTLP_* variables
// (endpoint, headers, TLS, compression, retries, timeouts).
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
