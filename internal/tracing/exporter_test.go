package tracing

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// exported are spans as the SDK's tracer ends them: a server span with
// its attributes and a lock span, its child.
func exported() []sdktrace.ReadOnlySpan {
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	server := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	return tracetest.SpanStubs{
		{Name: "POST /reservations", SpanContext: server, SpanKind: trace.SpanKindServer,
			Attributes: []attribute.KeyValue{attribute.String("http.route", "/reservations"), attribute.Int("http.response.status_code", 409)}},
		{Name: SpanAcquire, Parent: server, SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid,
			SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled}), Attributes: []attribute.KeyValue{AttrLockKey.String("seat:1:1")}},
	}.Snapshots()
}

// names are the names of the spans of req, with their attributes.
func names(req *coltracepb.ExportTraceServiceRequest) []string {
	var out []string
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, s.Name+prototext.Format(&commonpb.KeyValueList{Values: s.Attributes}))
			}
		}
	}
	return out
}

// exportTo exports spans with the exporter the environment names, shuts
// it down, and returns what the collector received.
func exportTo(t *testing.T, spans []sdktrace.ReadOnlySpan, received <-chan *coltracepb.ExportTraceServiceRequest) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exporter, err := newExporter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := exporter.ExportSpans(ctx, spans); err != nil {
		t.Fatalf("ExportSpans: %v", err)
	}
	if err := exporter.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case got := <-received:
		return got
	case <-ctx.Done():
		t.Fatal("the collector received nothing")
		return nil
	}
}

// httpCollector is an OTLP/HTTP collector that hands over each request
// it decodes.
func httpCollector(t *testing.T) (string, <-chan *coltracepb.ExportTraceServiceRequest) {
	received := make(chan *coltracepb.ExportTraceServiceRequest, 16)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			http.Error(w, "not an OTLP export", http.StatusBadRequest)
			return
		}
		received <- &req
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)
	return collector.URL, received
}

// checkExported: the collector decoded the spans of exported, with their
// names and attributes.
func checkExported(t *testing.T, got *coltracepb.ExportTraceServiceRequest) {
	t.Helper()
	spans := names(got)
	if len(spans) != 2 || !strings.HasPrefix(spans[0], "POST /reservations") || !strings.Contains(spans[0], "409") ||
		!strings.HasPrefix(spans[1], SpanAcquire) || !strings.Contains(spans[1], "seat:1:1") {
		t.Errorf("the collector received %q", spans)
	}
}

// Over OTLP/HTTP (the default protocol), a collector decodes the spans.
func TestExporterSendsOverHTTP(t *testing.T) {
	url, received := httpCollector(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	checkExported(t, exportTo(t, exported(), received))
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	received chan *coltracepb.ExportTraceServiceRequest
}

func (s *traceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.received <- req
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Over OTLP/gRPC too.
func TestExporterSendsOverGRPC(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	service := &traceService{received: make(chan *coltracepb.ExportTraceServiceRequest, 1)}
	coltracepb.RegisterTraceServiceServer(server, service)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+listener.Addr().String())
	checkExported(t, exportTo(t, exported(), service.received))
}

// The variables choose the exporter; a name or protocol the service does
// not know is an error that names the variable's value.
func TestExporterChoice(t *testing.T) {
	for _, tc := range []struct {
		exporter, protocol string
		want               string // the exporter's type, or the error's words
	}{
		{"", "", "*otlptrace.Exporter"},
		{"otlp", "http/protobuf", "*otlptrace.Exporter"},
		{" otlp ", "grpc", "*otlptrace.Exporter"},
		{"console", "", "*stdouttrace.Exporter"},
		{"none", "", "tracing.discard"},
		{"zipkin", "", `span exporter "zipkin": want otlp, console or none`},
		{"otlp", "http/json", `OTLP protocol "http/json": want http/protobuf or grpc`},
	} {
		t.Run(tc.exporter+"/"+tc.protocol, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", tc.exporter)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			exporter, err := newExporter(context.Background())
			if err != nil {
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %q, want %q", err, tc.want)
				}
				return
			}
			t.Cleanup(func() { _ = exporter.Shutdown(context.Background()) })
			if got := fmt.Sprintf("%T", exporter); got != tc.want {
				t.Fatalf("exporter %s, want %s", got, tc.want)
			}
		})
	}
}
