package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// TestLightSpansAreTheSDKs: the same calls on a light tracer and on the
// SDK's, with the same ids, sampler and limits, export the same request:
// names, kinds, times, attributes (repeated, invalid, over the limits),
// events, errors, links, statuses, remote and new-root parents, and no
// span the sampler dropped or only recorded.
func TestLightSpansAreTheSDKs(t *testing.T) {
	for _, limits := range []map[string]string{
		nil,
		{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "3", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "4",
			"OTEL_SPAN_EVENT_COUNT_LIMIT": "1", "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT": "1",
			"OTEL_SPAN_LINK_COUNT_LIMIT": "1", "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT": "0"},
	} {
		t.Run(fmt.Sprint(limits), func(t *testing.T) {
			for k, v := range limits {
				t.Setenv(k, v)
			}
			res := resource.NewSchemaless(attribute.String("service.name", ServiceName))
			sampler := namedSampler{}

			recorder := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder), sdktrace.WithSampler(sampler),
				sdktrace.WithIDGenerator(&countedIDs{}), sdktrace.WithResource(res))
			driveSpans(t, tp.Tracer(ScopeName))
			var sampled []sdktrace.ReadOnlySpan
			for _, s := range recorder.Ended() {
				if s.SpanContext().IsSampled() {
					sampled = append(sampled, s)
				}
			}
			want, _ := resourceSpans(nil, sampled)

			var client capturing
			light := &lightTracer{sampler: sampler, ids: &countedIDs{}, limits: sdktrace.NewSpanLimits(), provider: tp,
				batcher: newLightBatcher(&client, res, instrumentation.Scope{Name: ScopeName})}
			driveSpans(t, light)
			if err := light.batcher.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(client.uploaded) != 1 {
				t.Fatalf("%d uploads, want 1", len(client.uploaded))
			}
			if got, want := request(t, client.uploaded[0]), request(t, want); !proto.Equal(got, want) {
				t.Errorf("the light spans' request decodes to\n%s\nthe SDK's spans'\n%s", prototext.Format(got), prototext.Format(want))
			}
		})
	}
}

// driveSpans makes spans of every kind of call through tr, at fixed times.
func driveSpans(t *testing.T, tr trace.Tracer) {
	t.Helper()
	at := time.Unix(1_800_000_000, 0)
	ms := func(n int) trace.SpanEventOption {
		return trace.WithTimestamp(at.Add(time.Duration(n) * time.Millisecond))
	}
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	state, err := trace.ParseTraceState("vendor=value")
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled,
		TraceState: state, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)

	ctx, server := tr.Start(ctx, "POST", trace.WithSpanKind(trace.SpanKindServer), ms(0),
		trace.WithAttributes(attribute.Int("first", 1), attribute.String("repeated", "start")))
	if !server.IsRecording() || server.SpanContext().TraceID() != tid {
		t.Fatalf("the server span records %t, in trace %s", server.IsRecording(), server.SpanContext().TraceID())
	}
	server.SetAttributes(attribute.String("http.route", "/reservations"), attribute.String("repeated", "end"),
		attribute.KeyValue{}, attribute.StringSlice("slice", []string{"long value", "b"}), attribute.Bool("flag", true),
		attribute.Float64("ratio", 0.25), attribute.Int64Slice("fences", []int64{1, 2}))
	server.SetName("POST /reservations")

	_, acquire := tr.Start(ctx, "lock.acquire", ms(1), trace.WithLinks(
		trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.Bool("linked", true)}},
		trace.Link{}, // neither valid nor with attributes: not kept
		trace.Link{SpanContext: remote}))
	acquire.AddEvent("waited", trace.WithTimestamp(at.Add(2*time.Millisecond)),
		trace.WithAttributes(attribute.Float64("ms", 1.5), attribute.String("why", "held"), attribute.String("why", "again")))
	acquire.RecordError(errors.New("redis: connection refused"), trace.WithTimestamp(at.Add(3*time.Millisecond)))
	acquire.SetStatus(codes.Error, "lock acquisition failed")
	acquire.SetStatus(codes.Unset, "not kept: weaker than an error")
	acquire.End(ms(4))
	acquire.SetAttributes(attribute.String("after", "end")) // not kept
	acquire.SetName("not kept")
	if acquire.IsRecording() {
		t.Error("an ended span still records")
	}

	_, dropped := tr.Start(ctx, "drop me", ms(5))
	if dropped.IsRecording() || !dropped.SpanContext().IsValid() {
		t.Error("a dropped span records, or has no span context")
	}
	dropped.End()
	_, recordedOnly := tr.Start(ctx, "record only", ms(5))
	recordedOnly.End(ms(6))

	_, root := tr.Start(ctx, "root", trace.WithNewRoot(), ms(6))
	root.SetStatus(codes.Ok, "an ok status has no description")
	root.SetStatus(codes.Error, "not kept: ok is final")
	root.End(ms(7))

	server.End(ms(8))
}

// namedSampler drops the spans called "drop me", records without sampling
// those called "record only", and samples the others as parentbased
// always_on does.
type namedSampler struct{}

func (namedSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	switch p.Name {
	case "drop me":
		return sdktrace.SamplingResult{Decision: sdktrace.Drop}
	case "record only":
		return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample()).ShouldSample(p)
}

func (namedSampler) Description() string { return "named" }

// countedIDs are ids in sequence, the same for two tracers asked alike.
type countedIDs struct {
	mu sync.Mutex
	n  uint64
}

func (c *countedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	return trace.TraceID{0: 0xaa, 15: byte(n)}, c.NewSpanID(ctx, trace.TraceID{})
}

func (c *countedIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return trace.SpanID{0: 0xbb, 7: byte(c.n)}
}

// A request's server span started on sampleFirst's decision is the span
// Start makes after asking the sampler again: the same trace, parent,
// flags, trace state and sampler's attributes, for root requests and for
// callers' spans (the requests the sampler drops start none).
func TestDecidedSpanMatchesStart(t *testing.T) {
	sampler := annotatingSampler{sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.5))}
	light := newLightTracer(&capturing{}, nil, sampler, nil)
	cfg := trace.NewSpanStartConfig(trace.WithSpanKind(trace.SpanKindServer))
	state, err := trace.ParseTraceState("vendor=1")
	if err != nil {
		t.Fatal(err)
	}
	var kept, dropped int
	for i := range 200 {
		ctx, carried := context.Background(), i%2 == 1
		if carried {
			parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: newTraceID(), SpanID: newSpanID(),
				TraceFlags: trace.TraceFlags(i % 4 / 2), TraceState: state, Remote: true})
			ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
		}
		look, ok := sampleFirst(ctx, carried, sampler, "POST")
		if !ok {
			dropped++
			continue
		}
		kept++
		_, again := light.Start(look.withDrawnID(ctx), "POST", trace.WithSpanKind(trace.SpanKindServer))
		_, decided := light.startDecided(ctx, "POST", &cfg, look)
		a, b := again.(*lightSpan).rec, decided.(*lightSpan).rec
		if a.sc.TraceID() != b.sc.TraceID() || a.sc.TraceFlags() != b.sc.TraceFlags() || a.sc.TraceState().String() != b.sc.TraceState().String() ||
			!a.parent.Equal(b.parent) || a.kind != b.kind || a.name != b.name || !slices.Equal(a.attrs, b.attrs) {
			t.Fatalf("request %d (carried %v): decided span %+v, Start's %+v", i, carried, b, a)
		}
		if b.sc.SpanID() == a.sc.SpanID() || !b.sc.SpanID().IsValid() {
			t.Fatalf("request %d: span id %v beside Start's %v", i, b.sc.SpanID(), a.sc.SpanID())
		}
		again.End()
		decided.End()
	}
	if kept == 0 || dropped == 0 {
		t.Fatalf("kept %d, dropped %d: the cases were not all met", kept, dropped)
	}
}

// annotatingSampler adds an attribute and a trace state member to what
// its sampler decides.
type annotatingSampler struct{ sdktrace.Sampler }

func (s annotatingSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	r := s.Sampler.ShouldSample(p)
	r.Attributes = append(r.Attributes, attribute.String("sampled.by", "ratio"))
	r.Tracestate, _ = r.Tracestate.Insert("seatlock", "1")
	return r
}

// A panic through a deferred End is recorded as an exception event, and
// goes on.
func TestLightSpanRecordsAPanic(t *testing.T) {
	var client capturing
	light := newLightTracer(&client, nil, sdktrace.AlwaysSample(), nil)
	func() {
		defer func() {
			if r := recover(); r != "seat map torn" {
				t.Errorf("recovered %v, want the panic itself", r)
			}
		}()
		_, span := light.Start(context.Background(), "request")
		defer span.End()
		panic("seat map torn")
	}()
	if err := light.batcher.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := uploadedSpans(t, &client)
	if len(spans) != 1 || len(spans[0].Events) != 1 || spans[0].Events[0].Name != "exception" {
		t.Fatalf("uploaded %v, want one span with an exception event", spans)
	}
	var message string
	for _, kv := range spans[0].Events[0].Attributes {
		if kv.Key == "exception.message" {
			message = kv.Value.GetStringValue()
		}
	}
	if message != "seat map torn" {
		t.Errorf("exception.message %q", message)
	}
}

// uploadedSpans decodes every span client was given.
func uploadedSpans(t *testing.T, client *capturing) []*tracepb.Span {
	t.Helper()
	var spans []*tracepb.Span
	for _, upload := range client.uploaded {
		for _, rs := range request(t, upload).ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans
}

// A batch goes as soon as it holds OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans,
// and the rest at shutdown; spans from many goroutines are each sent once.
func TestLightBatcherSendsFullBatches(t *testing.T) {
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1000")
	client := &signalling{sent: make(chan int, 100)}
	light := newLightTracer(client, nil, sdktrace.AlwaysSample(), nil)
	const goroutines, each = 8, 11
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				_, span := light.Start(context.Background(), fmt.Sprintf("span %d.%d", g, i))
				span.End()
			}
		})
	}
	wg.Wait()
	full := goroutines * each / 10
	for range full {
		if n := client.nextUpload(t, "no full batch was sent"); n != 10 {
			t.Errorf("a batch of %d spans went before the delay, want 10", n)
		}
	}
	if err := light.batcher.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := client.nextUpload(t, "shutdown sent nothing"); n != goroutines*each-full*10 {
		t.Errorf("shutdown sent %d spans, want the %d left", n, goroutines*each-full*10)
	}
	names := map[string]bool{}
	for _, s := range uploadedSpans(t, &client.capturing) {
		names[s.Name] = true
	}
	if len(names) != goroutines*each {
		t.Errorf("%d distinct spans sent, want %d", len(names), goroutines*each)
	}
}

// A batch that is not full goes once the schedule delay has passed.
func TestLightBatcherSendsAfterTheDelay(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	client := &signalling{sent: make(chan int, 100)}
	light := newLightTracer(client, nil, sdktrace.AlwaysSample(), nil)
	defer func() { _ = light.batcher.Shutdown(context.Background()) }()
	_, span := light.Start(context.Background(), "alone")
	span.End()
	if n := client.nextUpload(t, "a lone span was not sent"); n != 1 {
		t.Errorf("sent %d spans, want 1", n)
	}
}

// While the uploads stall, spans beyond OTEL_BSP_MAX_QUEUE_SIZE are
// dropped rather than kept without bound; the others are sent.
func TestLightBatcherDropsBeyondTheQueue(t *testing.T) {
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "4")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	client := &signalling{sent: make(chan int, 100), stall: make(chan struct{})}
	light := newLightTracer(client, nil, sdktrace.AlwaysSample(), nil)
	for i := range 10 {
		_, span := light.Start(context.Background(), fmt.Sprint(i))
		span.End()
	}
	close(client.stall)
	if err := light.batcher.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(uploadedSpans(t, &client.capturing)); n != 4 {
		t.Errorf("%d spans sent, want the queue's 4", n)
	}
}

// A failed upload frees its spans' room in the queue: the spans after it
// are taken and sent, not dropped. Each upload is bounded by
// OTEL_BSP_EXPORT_TIMEOUT, and by nothing when it is 0, as with the SDK.
func TestLightBatcherGoesOnAfterAFailedUpload(t *testing.T) {
	for _, timeout := range []string{"0", "30000"} {
		t.Run("OTEL_BSP_EXPORT_TIMEOUT="+timeout, func(t *testing.T) {
			t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
			t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "2")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
			t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", timeout)
			client := &signalling{sent: make(chan int, 100), fail: errors.New("collector unreachable"),
				deadlines: make(chan bool, 100)}
			light := newLightTracer(client, nil, sdktrace.AlwaysSample(), nil)
			for round := range 3 {
				for i := range 2 {
					_, span := light.Start(context.Background(), fmt.Sprint(round, i))
					span.End()
				}
				what := fmt.Sprintf("round %d: no upload (the failed upload kept its spans' room)", round)
				if n := client.nextUpload(t, what); n != 2 {
					t.Fatalf("round %d: an upload of %d spans, want 2", round, n)
				}
				if bounded := <-client.deadlines; bounded != (timeout != "0") {
					t.Errorf("round %d: the upload had a deadline: %t", round, bounded)
				}
				waitForEmptyQueue(t, light.batcher)
			}
			if err := light.batcher.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitForEmptyQueue waits until l's uploads are over: a client signals
// before it returns, and l frees the room of its spans after.
func waitForEmptyQueue(t *testing.T, l *lightBatcher) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		queued := l.queued
		l.mu.Unlock()
		if queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans still queued after 10 s", queued)
		}
	}
}

// signalling is a capturing client that says how many spans each upload
// held (on sent) and whether it had a deadline (on deadlines, when set),
// after waiting for stall to close when it is set, and fails with fail.
type signalling struct {
	capturing
	sent      chan int
	stall     chan struct{}
	fail      error
	deadlines chan bool
}

// nextUpload waits for the next upload and returns how many spans it held;
// after 10 s the test fails, saying what.
func (s *signalling) nextUpload(t *testing.T, what string) int {
	t.Helper()
	select {
	case n := <-s.sent:
		return n
	case <-time.After(10 * time.Second):
		t.Fatalf("%s in 10 s", what)
		return 0
	}
}

func (s *signalling) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	if s.stall != nil {
		<-s.stall
	}
	if s.deadlines != nil {
		_, bounded := ctx.Deadline()
		s.deadlines <- bounded
	}
	if err := s.capturing.UploadTraces(ctx, rs); err != nil {
		return err
	}
	n := 0
	for _, r := range rs {
		b, err := proto.Marshal(r)
		if err != nil {
			return err
		}
		var decoded tracepb.ResourceSpans
		if err := proto.Unmarshal(b, &decoded); err != nil {
			return err
		}
		for _, ss := range decoded.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	s.sent <- n
	return s.fail
}

// Opened for OTLP, the service's server and lock spans are light spans,
// and reach the collector as the caller's trace: the server span a child
// of the caller's, named by its route, the lock span a child of it.
func TestOpenTracesWithLightSpans(t *testing.T) {
	url, received := httpCollector(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	tr, err := Open(context.Background(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.own.(*lightTracer); !ok {
		t.Fatalf("the service's own spans are made by a %T", tr.own)
	}
	req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	w := httptest.NewRecorder()
	hotSeatHandler(tr).ServeHTTP(w, req)
	if w.Code != http.StatusConflict {
		t.Fatalf("status %d", w.Code)
	}
	tr.Flush()
	spans := map[string]*tracepb.Span{}
	for len(received) > 0 {
		for _, rs := range (<-received).ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = s
				}
			}
		}
	}
	server, acquire := spans["POST /reservations"], spans[SpanAcquire]
	if len(spans) != 2 || server == nil || acquire == nil {
		t.Fatalf("the collector received the spans %v", slices.Collect(maps.Keys(spans)))
	}
	if got := fmt.Sprintf("%x %x", server.TraceId, server.ParentSpanId); got != "4bf92f3577b34da6a3ce929d0e0e4736 00f067aa0ba902b7" {
		t.Errorf("the server span's trace and parent: %s", got)
	}
	if server.Kind != tracepb.Span_SPAN_KIND_SERVER || !hasAttribute(server, "http.response.status_code", "409") ||
		!hasAttribute(server, "http.route", "/reservations") {
		t.Errorf("the server span: %v", server)
	}
	if !bytes.Equal(acquire.ParentSpanId, server.SpanId) || !hasAttribute(acquire, string(AttrLockOutcome), "sealed") {
		t.Errorf("the lock span: %v", acquire)
	}
}

// hasAttribute tells whether s has the attribute key, of value want (as
// text).
func hasAttribute(s *tracepb.Span, key, want string) bool {
	for _, kv := range s.Attributes {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue == want
		case *commonpb.AnyValue_IntValue:
			return fmt.Sprint(v.IntValue) == want
		}
	}
	return false
}
