package tracing

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// capturing is an OTLP client that keeps what it is given to upload.
type capturing struct{ uploaded [][]*tracepb.ResourceSpans }

func (c *capturing) Start(context.Context) error { return nil }
func (c *capturing) Stop(context.Context) error  { return nil }

// UploadTraces keeps copies: the wire exporter writes its next batch over
// the bytes of the last, as the SDK's clients allow, which marshal the
// request before they return.
func (c *capturing) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	kept := make([]*tracepb.ResourceSpans, len(rs))
	for i, r := range rs {
		kept[i] = proto.Clone(r).(*tracepb.ResourceSpans)
	}
	c.uploaded = append(c.uploaded, kept)
	return nil
}

// request is the export request as the collector decodes it, its
// resources in the order of their encoding (the SDK's exporter puts them
// in a map's order).
func request(t *testing.T, rs []*tracepb.ResourceSpans) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	wire, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(wire, &got); err != nil {
		t.Fatalf("the collector could not decode the request: %v", err)
	}
	key := func(r *tracepb.ResourceSpans) []byte {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(r.GetResource())
		return b
	}
	slices.SortFunc(got.ResourceSpans, func(a, b *tracepb.ResourceSpans) int { return bytes.Compare(key(a), key(b)) })
	return &got
}

// The wire exporter's requests decode to what the SDK's OTLP exporter
// sends for the same spans: every field of every message, attributes of
// every type, events, links, statuses, remote and missing parents,
// dropped counts, several scopes and resources.
func TestWireMatchesTheSDK(t *testing.T) {
	ctx := context.Background()
	spans := wireSpans(t)

	var sdk capturing
	sdkExporter, err := otlptrace.New(ctx, &sdk)
	if err != nil {
		t.Fatal(err)
	}
	var ours capturing
	wireExporter, err := newWireExporter(ctx, &ours)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]sdktrace.ReadOnlySpan{spans, spans[:1], nil} {
		sdk.uploaded, ours.uploaded = nil, nil
		if err := sdkExporter.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := wireExporter.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if len(ours.uploaded) != len(sdk.uploaded) {
			t.Fatalf("%d spans: %d uploads, the SDK's exporter %d", len(batch), len(ours.uploaded), len(sdk.uploaded))
		}
		for i := range sdk.uploaded {
			want, got := request(t, sdk.uploaded[i]), request(t, ours.uploaded[i])
			if !proto.Equal(got, want) {
				t.Errorf("%d spans: the request decodes to\n%s\nthe SDK's exporter sends\n%s",
					len(batch), prototext.Format(got), prototext.Format(want))
			}
		}
	}
	if err := wireExporter.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWireReusesItsEncoding: an exporter writes each batch over the array
// of the last, and a batch bigger than its estimate grows it in the middle
// of a resource; every request is still the SDK exporter's.
func TestWireReusesItsEncoding(t *testing.T) {
	ctx := context.Background()
	var sdk, ours capturing
	sdkExporter, err := otlptrace.New(ctx, &sdk)
	if err != nil {
		t.Fatal(err)
	}
	wireExporter, err := newWireExporter(ctx, &ours)
	if err != nil {
		t.Fatal(err)
	}
	small := serverSpanBatch(3)
	for _, batch := range [][]sdktrace.ReadOnlySpan{small, bigSpans(6, 2000), small, bigSpans(9, 5000), bigSpans(2, 100)} {
		if err := sdkExporter.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := wireExporter.ExportSpans(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if len(ours.uploaded) != len(sdk.uploaded) {
		t.Fatalf("%d uploads, the SDK's exporter %d", len(ours.uploaded), len(sdk.uploaded))
	}
	for i := range sdk.uploaded {
		if want, got := request(t, sdk.uploaded[i]), request(t, ours.uploaded[i]); !proto.Equal(got, want) {
			t.Errorf("batch %d: the request decodes to\n%s\nthe SDK's exporter sends\n%s", i, prototext.Format(got), prototext.Format(want))
		}
	}
}

// bigSpans is n spans of three resources in turn, each with an attribute
// of size bytes.
func bigSpans(n, size int) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, n)
	for i := range stubs {
		stubs[i] = tracetest.SpanStub{
			Name: fmt.Sprintf("span %d", i),
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), 1},
				SpanID: trace.SpanID{byte(i), 2}, TraceFlags: trace.FlagsSampled}),
			Resource:   resource.NewSchemaless(attribute.Int("resource", i%3)),
			Attributes: []attribute.KeyValue{attribute.String("big", strings.Repeat(string(rune('a'+i)), size))},
		}
	}
	return stubs.Snapshots()
}

func wireSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	traceID := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	state, err := trace.ParseTraceState("vendor=value,other=x")
	if err != nil {
		t.Fatal(err)
	}
	remoteParent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9},
		TraceFlags: trace.FlagsSampled, Remote: true})
	localParent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{8, 8, 8, 8, 8, 8, 8, 8},
		TraceFlags: trace.FlagsSampled})
	spanContext := func(span byte, flags trace.TraceFlags) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{span, 1, 1, 1, 1, 1, 1, 1},
			TraceFlags: flags, TraceState: state})
	}
	everyType := []attribute.KeyValue{
		attribute.String("string", "seat 7"), attribute.String("empty", ""),
		// Lengths of two bytes: a value's, a key's.
		attribute.String("long", strings.Repeat("seat ", 40)), attribute.Int(strings.Repeat("k", 130), 1),
		attribute.Bool("true", true), attribute.Bool("false", false),
		attribute.Int64("int", -42), attribute.Int64("zero", 0), attribute.Int64("big", 1<<62),
		attribute.Float64("float", 3.25), attribute.Float64("zero float", 0),
		attribute.BoolSlice("bools", []bool{true, false}), attribute.Int64Slice("ints", []int64{1, 0, -1}),
		attribute.Float64Slice("floats", []float64{0.5, 0}), attribute.StringSlice("strings", []string{"a", ""}),
		attribute.StringSlice("no strings", nil),
		attribute.ByteSlice("bytes", []byte{0, 1, 2}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(2), attribute.SliceValue(attribute.BoolValue(true))),
		attribute.Map("map", attribute.String("inner", "v"), attribute.Int("n", 3)),
		{Key: "empty value"},
		{Key: "", Value: attribute.StringValue("no key")},
	}
	service := resource.NewSchemaless(attribute.String("service.name", "seatlock"), attribute.Int("shard", 2))
	other := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: ScopeName, Version: "1.2.3", SchemaURL: "https://opentelemetry.io/schemas/1.26.0",
		Attributes: attribute.NewSet(attribute.String("scope.kind", "service"))}
	redisScope := instrumentation.Scope{Name: "github.com/redis/go-redis/extra/redisotel"}
	start := time.Date(2026, 11, 27, 1, 2, 3, 456789, time.UTC)
	stubs := tracetest.SpanStubs{
		{
			Name: "POST /v1/schedules/{id}/reservations", SpanContext: spanContext(1, trace.FlagsSampled), Parent: remoteParent,
			SpanKind: trace.SpanKindServer, StartTime: start, EndTime: start.Add(1500 * time.Microsecond),
			Attributes: everyType, DroppedAttributes: 3,
			Events: []sdktrace.Event{
				{Name: "exception", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.String("exception.message", "boom")}, DroppedAttributeCount: 1},
				{Name: "", Time: time.Time{}},
			},
			DroppedEvents: 2,
			Links: []sdktrace.Link{
				{SpanContext: remoteParent, Attributes: []attribute.KeyValue{attribute.Int("n", 1)}, DroppedAttributeCount: 4},
				{SpanContext: spanContext(7, 0)},
			},
			DroppedLinks: 5, Status: sdktrace.Status{Code: codes.Error, Description: "seat_locked"},
			Resource: service, InstrumentationScope: scope,
		},
		{
			Name: "lock.acquire", SpanContext: spanContext(2, trace.FlagsSampled), Parent: localParent, SpanKind: trace.SpanKindInternal,
			StartTime: start, EndTime: start.Add(time.Millisecond), Status: sdktrace.Status{Code: codes.Ok},
			Resource: service, InstrumentationScope: scope,
		},
		{
			Name: "evalsha", SpanContext: spanContext(3, 0), SpanKind: trace.SpanKindClient, StartTime: start, EndTime: start,
			Attributes: []attribute.KeyValue{attribute.String("db.system.name", "redis")},
			Resource:   service, InstrumentationScope: redisScope,
		},
		{Name: "no scope", SpanContext: spanContext(4, trace.FlagsSampled), SpanKind: trace.SpanKindProducer, Resource: service},
		{Name: "consumer", SpanContext: spanContext(5, trace.FlagsSampled), SpanKind: trace.SpanKindConsumer, Resource: other, InstrumentationScope: scope},
		{Name: "", SpanContext: spanContext(6, trace.FlagsSampled), SpanKind: trace.SpanKind(9), StartTime: time.Unix(-5, 0)},
		{Name: "back to the first scope", SpanContext: spanContext(10, trace.FlagsSampled), SpanKind: trace.SpanKindUnspecified,
			Resource: service, InstrumentationScope: scope},
	}
	return stubs.Snapshots()
}

// BenchmarkExportEncoding measures what the SDK's exporter and the wire
// exporter spend turning a batch of 512 server spans into the bytes of an
// export request.
func BenchmarkExportEncoding(b *testing.B) {
	ctx := context.Background()
	spans := serverSpanBatch(512)
	for _, exporter := range []struct {
		name string
		new  func(otlptrace.Client) (sdktrace.SpanExporter, error)
	}{
		{"sdk", func(c otlptrace.Client) (sdktrace.SpanExporter, error) { return otlptrace.New(ctx, c) }},
		{"wire", func(c otlptrace.Client) (sdktrace.SpanExporter, error) { return newWireExporter(ctx, c) }},
	} {
		b.Run(exporter.name, func(b *testing.B) {
			e, err := exporter.new(marshalling{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := e.ExportSpans(ctx, spans); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// marshalling is an OTLP client that marshals the request, as the SDK's
// clients do before they send it, and sends nothing.
type marshalling struct{}

func (marshalling) Start(context.Context) error { return nil }
func (marshalling) Stop(context.Context) error  { return nil }

func (marshalling) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	_, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	return err
}

// serverSpanBatch is n spans like the service's server spans on the hot
// seat: the HTTP server conventions' attributes, a status, a scope.
func serverSpanBatch(n int) []sdktrace.ReadOnlySpan {
	res := resource.NewSchemaless(attribute.String("service.name", ServiceName), attribute.String("telemetry.sdk.language", "go"),
		attribute.String("telemetry.sdk.name", "opentelemetry"), attribute.String("telemetry.sdk.version", "1.47.0"))
	scope := instrumentation.Scope{Name: ScopeName}
	start := time.Now()
	stubs := make(tracetest.SpanStubs, n)
	for i := range stubs {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
			SpanID: trace.SpanID{byte(i), 1, 2, 3, 4, 5, 6, 7}, TraceFlags: trace.FlagsSampled})
		stubs[i] = tracetest.SpanStub{
			Name: "POST /v1/schedules/{id}/reservations", SpanContext: sc, SpanKind: trace.SpanKindServer,
			StartTime: start, EndTime: start.Add(time.Millisecond), Resource: res, InstrumentationScope: scope,
			Status: sdktrace.Status{Code: codes.Error},
			Attributes: []attribute.KeyValue{
				attribute.String("server.address", "127.0.0.1"), attribute.String("http.request.method", "POST"),
				attribute.String("url.scheme", "http"), attribute.Int("server.port", 8080),
				attribute.String("network.peer.address", "127.0.0.1"), attribute.Int("network.peer.port", 40000+i),
				attribute.String("user_agent.original", "hammer"), attribute.String("client.address", "127.0.0.1"),
				attribute.String("url.path", "/v1/schedules/1/reservations"), attribute.String("network.protocol.version", "1.1"),
				attribute.String("http.route", "/v1/schedules/{id}/reservations"), attribute.Int("http.request.body.size", 14),
				attribute.Int("http.response.body.size", 160), attribute.Int("http.response.status_code", 409),
			},
		}
	}
	return stubs.Snapshots()
}

// A span whose strings are not UTF-8 (a client may send any bytes in its
// User-Agent or path) reaches the collector with U+FFFD in their place,
// and the spans beside it with it: a collector refuses a request with a
// string that is not UTF-8, all its spans.
func TestWireReplacesInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	good := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{2}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	res := resource.NewSchemaless(attribute.String("host.name", "bad\xffhost"))
	spans := tracetest.SpanStubs{
		{
			Name: "GET /\xff", SpanContext: sc, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "scope\xc3"},
			Attributes: []attribute.KeyValue{
				attribute.String("user_agent.original", "agent\xff\xfe/1"),
				attribute.String("key\xff", "value"),
				attribute.StringSlice("list", []string{"ok", "\xe2\x82"}),
			},
			Events: []sdktrace.Event{{Name: "event\x80"}},
			Status: sdktrace.Status{Code: codes.Error, Description: "\xffdescription"},
		},
		{Name: "GET /ok", SpanContext: good, Resource: res, InstrumentationScope: instrumentation.Scope{Name: "scope\xc3"}},
	}.Snapshots()
	var c capturing
	e, err := newWireExporter(ctx, &c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(ctx, spans); err != nil {
		t.Fatal(err)
	}
	got := request(t, c.uploaded[0]) // fails the test if it does not decode
	rs := got.GetResourceSpans()
	if len(rs) != 1 || len(rs[0].GetScopeSpans()) != 1 || len(rs[0].GetScopeSpans()[0].GetSpans()) != 2 {
		t.Fatalf("decoded %s, want one resource, one scope, two spans", prototext.Format(got))
	}
	ss := rs[0].GetScopeSpans()[0]
	bad, ok := ss.GetSpans()[0], ss.GetSpans()[1]
	for _, check := range []struct{ what, got, want string }{
		{"resource attribute", rs[0].GetResource().GetAttributes()[0].GetValue().GetStringValue(), "bad\uFFFDhost"},
		{"scope name", ss.GetScope().GetName(), "scope\uFFFD"},
		{"span name", bad.GetName(), "GET /\uFFFD"},
		{"string value", bad.GetAttributes()[0].GetValue().GetStringValue(), "agent\uFFFD/1"},
		{"key", bad.GetAttributes()[1].GetKey(), "key\uFFFD"},
		{"string in a list", bad.GetAttributes()[2].GetValue().GetArrayValue().GetValues()[1].GetStringValue(), "\uFFFD"},
		{"event name", bad.GetEvents()[0].GetName(), "event\uFFFD"},
		{"status", bad.GetStatus().GetMessage(), "\uFFFDdescription"},
		{"the other span's name", ok.GetName(), "GET /ok"},
	} {
		if check.got != check.want {
			t.Errorf("%s = %q, want %q", check.what, check.got, check.want)
		}
	}
}

// FuzzWireMatchesTheSDK: for any strings and numbers in a span, the wire
// exporter's request decodes, and when every string is UTF-8 it decodes
// to the SDK's exporter's.
func FuzzWireMatchesTheSDK(f *testing.F) {
	f.Add("POST /v1/schedules/{id}/reservations", "http.route", "/v1/schedules/7/reservations", int64(409), 0.5, true, []byte{1, 2})
	f.Add("", "", "", int64(0), 0.0, false, []byte(nil))
	f.Add("n\xff", "k\xc3", "v\xe2\x82", int64(-1), math.Inf(-1), true, []byte{0xff})
	f.Fuzz(func(t *testing.T, name, key, value string, n int64, x float64, yes bool, raw []byte) {
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{byte(n), 1}, SpanID: trace.SpanID{byte(n >> 8), 1},
			TraceFlags: trace.TraceFlags(n), TraceState: trace.TraceState{}})
		start := time.Unix(0, n)
		spans := tracetest.SpanStubs{{
			Name: name, SpanContext: sc, SpanKind: trace.SpanKind(n & 7), StartTime: start, EndTime: start.Add(time.Duration(n & 0xffff)),
			Attributes: []attribute.KeyValue{
				attribute.String(key, value), attribute.Int64(key, n), attribute.Float64(value, x), attribute.Bool(name, yes),
				attribute.ByteSlice(key, raw), attribute.StringSlice(value, []string{name, key}),
				attribute.Slice(name, attribute.Float64Value(x), attribute.StringValue(value)),
				attribute.Map(key, attribute.String(value, name), attribute.Int64(name, n)),
			},
			Events:               []sdktrace.Event{{Name: value, Time: start, Attributes: []attribute.KeyValue{attribute.Float64Slice(key, []float64{x})}}},
			Status:               sdktrace.Status{Code: codes.Code(uint32(n) % 4), Description: name},
			DroppedAttributes:    int(n & 0xff),
			Resource:             resource.NewSchemaless(attribute.String(key, value)),
			InstrumentationScope: instrumentation.Scope{Name: value, Version: key},
		}}.Snapshots()
		var ours capturing
		e, err := newWireExporter(context.Background(), &ours)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		got := request(t, ours.uploaded[0])
		if !utf8.ValidString(name) || !utf8.ValidString(key) || !utf8.ValidString(value) {
			return
		}
		if want := sdkRequest(t, spans); !proto.Equal(got, want) {
			t.Errorf("the request decodes to\n%s\nthe SDK's exporter sends\n%s", prototext.Format(got), prototext.Format(want))
		}
	})
}
