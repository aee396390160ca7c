package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exported is what the tests read of an export's response.
type exported struct {
	StatusCode int
	Status     string
}

func export(t *testing.T, url string, body []byte) exported {
	t.Helper()
	resp, err := http.Post(url+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	return exported{resp.StatusCode, resp.Status}
}

func spansCounted(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/spans")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

func TestSinkCountsTheSpansOfEveryExport(t *testing.T) {
	srv := httptest.NewServer(newSink())
	defer srv.Close()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: make([]*tracepb.Span, 3)}, {Spans: make([]*tracepb.Span, 2)}}},
		{ScopeSpans: []*tracepb.ScopeSpans{{Spans: make([]*tracepb.Span, 1)}}},
	}}
	for i := range req.ResourceSpans[0].ScopeSpans[0].Spans {
		req.ResourceSpans[0].ScopeSpans[0].Spans[i] = &tracepb.Span{Name: "a"}
	}
	for i := range req.ResourceSpans[0].ScopeSpans[1].Spans {
		req.ResourceSpans[0].ScopeSpans[1].Spans[i] = &tracepb.Span{Name: "b"}
	}
	req.ResourceSpans[1].ScopeSpans[0].Spans[0] = &tracepb.Span{Name: "c"}
	body, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if resp := export(t, srv.URL, body); resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %s", resp.Status)
		}
	}
	if got := spansCounted(t, srv.URL); got != "12" {
		t.Errorf("spans counted after two exports of 6: %s, want 12", got)
	}
	if resp := export(t, srv.URL, body[:len(body)-1]); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a truncated export: %s, want 400", resp.Status)
	}
	if got := spansCounted(t, srv.URL); got != "12" {
		t.Errorf("spans counted after a truncated export: %s, want 12 still", got)
	}
}

func TestSinkRefusesWhatIsNotAnExport(t *testing.T) {
	srv := httptest.NewServer(newSink())
	defer srv.Close()
	if resp := export(t, srv.URL, []byte("\xff\xff not protobuf")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage: %s, want 400", resp.Status)
	}
	if got := spansCounted(t, srv.URL); got != "0" {
		t.Errorf("spans counted after garbage: %s, want 0", got)
	}
}
