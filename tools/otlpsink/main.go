// Command otlpsink receives OpenTelemetry traces over OTLP/HTTP and counts
// their spans, nothing more: `make compare` points a traced service at it
// (TRACED=1) to measure what tracing costs the service, exporting
// included, without a trace viewer on the machine.
//
//	otlpsink -addr 127.0.0.1:4318
//
// POST /v1/traces takes an ExportTraceServiceRequest in protobuf (the
// exporter's default) and answers an empty ExportTraceServiceResponse;
// GET /spans answers the number of spans received so far.
//
// The sink decodes each export with the generated OTLP types, as a
// collector does, and counts the spans of its resources' scopes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync/atomic"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4318", "listen address")
	flag.Parse()
	if err := http.ListenAndServe(*addr, newSink()); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
		os.Exit(1)
	}
}

// sink counts the spans of every export it accepts.
type sink struct {
	spans atomic.Int64
	mux   *http.ServeMux
}

func newSink() *sink {
	s := &sink{mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /v1/traces", s.export)
	s.mux.HandleFunc("GET /spans", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, s.spans.Load())
	})
	return s
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *sink) export(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "read: "+err.Error(), http.StatusBadRequest)
		return
	}
	n, err := countSpans(body)
	if err != nil {
		http.Error(w, "not an OTLP trace export in protobuf: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.spans.Add(n)
	// An empty ExportTraceServiceResponse is zero bytes of protobuf.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Header().Set("Content-Length", "0")
}

// countSpans counts the spans of an ExportTraceServiceRequest in protobuf.
func countSpans(export []byte) (int64, error) {
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(export, &req); err != nil {
		return 0, err
	}
	var n int64
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			n += int64(len(ss.GetSpans()))
		}
	}
	return n, nil
}
