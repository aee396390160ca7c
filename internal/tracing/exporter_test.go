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

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// sdkRequest is the request the SDK's own OTLP exporter makes of spans,
// as a collector decodes it.
func sdkRequest(t *testing.T, spans []sdktrace.ReadOnlySpan) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var c capturing
	e, err := otlptrace.New(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(context.Background(), spans); err != nil || len(c.uploaded) != 1 {
		t.Fatalf("the SDK's exporter: %d uploads, %v", len(c.uploaded), err)
	}
	return request(t, c.uploaded[0])
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
		return request(t, got.ResourceSpans)
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

// Over OTLP/HTTP (the default protocol), a collector decodes what the
// SDK's exporter would have sent.
func TestExporterSendsOverHTTP(t *testing.T) {
	url, received := httpCollector(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	spans := wireSpans(t)
	if got, want := exportTo(t, spans, received), sdkRequest(t, spans); !proto.Equal(got, want) {
		t.Errorf("the collector received\n%s\nthe SDK's exporter sends\n%s", prototext.Format(got), prototext.Format(want))
	}
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
	spans := wireSpans(t)
	if got, want := exportTo(t, spans, service.received), sdkRequest(t, spans); !proto.Equal(got, want) {
		t.Errorf("the collector received\n%s\nthe SDK's exporter sends\n%s", prototext.Format(got), prototext.Format(want))
	}
}

// The variables choose the exporter; a name or protocol the service does
// not know is an error that names the variable's value.
func TestExporterChoice(t *testing.T) {
	for _, tc := range []struct {
		exporter, protocol string
		want               string // the exporter's type, or the error's words
	}{
		{"", "", "*tracing.wireExporter"},
		{"otlp", "http/protobuf", "*tracing.wireExporter"},
		{" otlp ", "grpc", "*tracing.wireExporter"},
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
