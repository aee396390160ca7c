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
// The sink counts spans by walking the export's wire format, without
// decoding the spans: it shares the machine with the service it measures,
// and what a collector spends decoding spans is the collector's cost, not
// the service's.
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

	"google.golang.org/protobuf/encoding/protowire"
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

// Field numbers of the OTLP trace messages the count walks through.
const (
	exportResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	resourceScopeSpans  = 2 // ResourceSpans.scope_spans
	scopeSpans          = 2 // ScopeSpans.spans
)

// countSpans counts the spans of an ExportTraceServiceRequest: the spans
// fields of the scope_spans of its resource_spans.
func countSpans(export []byte) (int64, error) {
	var n int64
	err := eachMessage(export, exportResourceSpans, func(resource []byte) error {
		return eachMessage(resource, resourceScopeSpans, func(scope []byte) error {
			return eachMessage(scope, scopeSpans, func([]byte) error {
				n++
				return nil
			})
		})
	})
	return n, err
}

// eachMessage calls fn with every length-delimited field numbered field in
// msg, skipping the other fields, and fails on bytes that are not protobuf.
func eachMessage(msg []byte, field protowire.Number, fn func([]byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		if num == field && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(msg)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if err := fn(v); err != nil {
				return err
			}
			msg = msg[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
	}
	return nil
}
