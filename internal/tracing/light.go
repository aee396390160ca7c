package tracing

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// lightTracer makes the service's own spans, the server's and the lock
// port's, which every sampled request makes, and writes each into its
// export's encoding as it ends (lightBatcher). The SDK's spans would do
// the same work in more steps: a span, a snapshot of it when it ends
// (with a map to drop repeated attributes), a channel to the batch
// processor's goroutine, then the encoding of the whole batch. With every
// request traced, those steps were most of what tracing cost the hot seat
// (docs/performance.md). The spans are the SDK's, field for field
// (TestLightSpansAreTheSDKs): the same sampler and ids, the same span
// limits (OTEL_SPAN_*), the same export (OTEL_BSP_*, the same OTLP client
// and resource); only nested attribute values (maps, slices of values),
// which the service does not make, are not normalised as the SDK does.
// The other spans of a trace (pgx's, Redis's, the group writes') are the
// SDK's, children of a light span like of any other.
type lightTracer struct {
	embedded.Tracer
	sampler sdktrace.Sampler
	ids     sdktrace.IDGenerator
	limits  sdktrace.SpanLimits
	batcher *lightBatcher
	// provider is what the spans answer to TracerProvider: the SDK's, for
	// the children some instrumentation starts through it.
	provider trace.TracerProvider
}

// newLightTracer makes the light spans of the service's own scope, with
// the provider's sampler, ids, span limits and resource, exported through
// client.
func newLightTracer(client otlptrace.Client, res *resource.Resource, sampler sdktrace.Sampler, provider *sdktrace.TracerProvider) *lightTracer {
	return &lightTracer{sampler: sampler, ids: drawnIDs{}, limits: sdktrace.NewSpanLimits(), provider: provider,
		batcher: newLightBatcher(client, res, instrumentation.Scope{Name: ScopeName})}
}

// Start starts a span as the SDK's tracer does: the parent in ctx (none
// with trace.WithNewRoot), the sampler's decision, a span recorded only
// when the sampler records it.
func (t *lightTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	if ctx == nil {
		ctx = context.Background()
	}
	var parent trace.SpanContext
	if cfg.NewRoot() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	} else {
		parent = trace.SpanContextFromContext(ctx)
	}
	var tid trace.TraceID
	var sid trace.SpanID
	if parent.TraceID().IsValid() {
		tid, sid = parent.TraceID(), t.ids.NewSpanID(ctx, parent.TraceID())
	} else {
		tid, sid = t.ids.NewIDs(ctx)
	}
	decided := t.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: name,
		Kind: cfg.SpanKind(), Attributes: cfg.Attributes(), Links: cfg.Links()})
	return t.begin(ctx, name, &cfg, parent, tid, sid, decided)
}

// startDecided starts a request's server span on the decision sampleFirst
// made, without asking the sampler again: the same span as Start's (its
// parent is the caller's, its trace id the one the decision was made on).
func (t *lightTracer) startDecided(ctx context.Context, name string, cfg *trace.SpanConfig, look firstLook) (context.Context, trace.Span) {
	return t.begin(ctx, name, cfg, look.parent, look.traceID, t.ids.NewSpanID(ctx, look.traceID), look.result)
}

// begin starts a span of the given ids on the sampler's decision.
func (t *lightTracer) begin(ctx context.Context, name string, cfg *trace.SpanConfig, parent trace.SpanContext,
	tid trace.TraceID, sid trace.SpanID, decided sdktrace.SamplingResult) (context.Context, trace.Span) {
	flags := parent.TraceFlags() &^ trace.FlagsSampled
	if decided.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, TraceState: decided.Tracestate})
	if decided.Decision == sdktrace.Drop {
		ctx = trace.ContextWithSpanContext(ctx, sc)
		return ctx, trace.SpanFromContext(ctx)
	}
	start := cfg.Timestamp()
	if start.IsZero() {
		start = time.Now()
	}
	s := &lightSpan{tracer: t, rec: spanRecord{sc: sc, parent: parent, name: name,
		kind: trace.ValidateSpanKind(cfg.SpanKind()), start: start}}
	s.pooled = lightAttrs.Get().(*[]attribute.KeyValue)
	s.rec.attrs = *s.pooled
	for _, l := range cfg.Links() {
		s.AddLink(l)
	}
	s.SetAttributes(decided.Attributes...)
	s.SetAttributes(cfg.Attributes()...)
	return trace.ContextWithSpan(ctx, s), s
}

// lightAttrs keeps the spans' attribute slices: a span's are encoded when
// it ends, and its slice is free again then.
var lightAttrs = sync.Pool{New: func() any {
	kvs := make([]attribute.KeyValue, 0, 24)
	return &kvs
}}

// lightSpan is a span of lightTracer. It is safe for concurrent use, as
// the SDK's is: a group write reads the span of each booking it writes.
type lightSpan struct {
	embedded.Span
	tracer *lightTracer

	mu    sync.Mutex
	ended bool
	// rec is the span as it will be encoded. Its attributes are in a slice
	// of lightAttrs (pooled) while the span records, and nil once it ended:
	// the slice went back to the pool.
	rec    spanRecord
	pooled *[]attribute.KeyValue
}

func (s *lightSpan) SpanContext() trace.SpanContext { return s.rec.sc }

func (s *lightSpan) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

func (s *lightSpan) TracerProvider() trace.TracerProvider { return s.tracer.provider }

func (s *lightSpan) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.rec.name = name
	}
}

// SetStatus keeps the strongest status (ok over error over unset), and a
// description for an error only.
func (s *lightSpan) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.rec.status.Code > code {
		return
	}
	s.rec.status = sdktrace.Status{Code: code}
	if code == codes.Error {
		s.rec.status.Description = description
	}
}

// SetAttributes sets each attribute in place of the span's one of the same
// key, else adds it, up to the span's limit (AttributeCountLimit).
func (s *lightSpan) SetAttributes(kvs ...attribute.KeyValue) {
	if len(kvs) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.rec.attrs, s.rec.droppedAttrs = s.tracer.setAttributes(s.rec.attrs, s.rec.droppedAttrs, kvs)
}

// setAttributes adds kvs to a span's attrs and returns them with the count
// of the span's dropped attributes, dropped before and now: an invalid
// attribute, or a new key over AttributeCountLimit, is dropped; a key the
// span has keeps its place and takes the new value; string values are cut
// to AttributeValueLengthLimit.
func (t *lightTracer) setAttributes(attrs []attribute.KeyValue, dropped int, kvs []attribute.KeyValue) ([]attribute.KeyValue, int) {
	limit := t.limits.AttributeCountLimit
next:
	for _, kv := range kvs {
		if !kv.Valid() {
			dropped++
			continue
		}
		if t.limits.AttributeValueLengthLimit >= 0 {
			kv = truncated(kv, t.limits.AttributeValueLengthLimit)
		}
		for i := range attrs {
			if attrs[i].Key == kv.Key {
				attrs[i] = kv
				continue next
			}
		}
		if limit >= 0 && len(attrs) >= limit {
			dropped++
			continue
		}
		attrs = append(attrs, kv)
	}
	return attrs, dropped
}

// truncated cuts a string value (or each of a string slice's) to limit
// characters, as the SDK does.
func truncated(kv attribute.KeyValue, limit int) attribute.KeyValue {
	switch kv.Value.Type() {
	case attribute.STRING:
		if v := kv.Value.AsString(); len(v) > limit {
			return kv.Key.String(truncate(v, limit))
		}
	case attribute.STRINGSLICE:
		vs := kv.Value.AsStringSlice()
		for i, v := range vs {
			vs[i] = truncate(v, limit)
		}
		return kv.Key.StringSlice(vs)
	}
	return kv
}

// truncate is the first limit characters of s, its invalid UTF-8 dropped
// first, as the SDK does.
func truncate(s string, limit int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i]
		}
		n++
	}
	return s
}

// AddEvent adds an event, the oldest dropped over EventCountLimit.
func (s *lightSpan) AddEvent(name string, opts ...trace.EventOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.addEvent(name, opts...)
	}
}

func (s *lightSpan) addEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	// An event's and a link's attributes are kept as given, as the SDK
	// keeps them: neither deduplicated nor cut.
	e := sdktrace.Event{Name: name, Attributes: cfg.Attributes(), Time: cfg.Timestamp()}
	if limit := s.tracer.limits.AttributePerEventCountLimit; limit >= 0 && len(e.Attributes) > limit {
		e.DroppedAttributeCount = len(e.Attributes) - limit
		e.Attributes = e.Attributes[:limit]
	}
	s.rec.events, s.rec.droppedEvents = evicting(s.rec.events, s.rec.droppedEvents, s.tracer.limits.EventCountLimit, e)
}

// RecordError adds an exception event for err, as the SDK does.
func (s *lightSpan) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	opts = append(opts, trace.WithAttributes(semconv.ExceptionType(typeName(err)), semconv.ExceptionMessage(err.Error())))
	if cfg := trace.NewEventConfig(opts...); cfg.StackTrace() {
		opts = append(opts, trace.WithAttributes(semconv.ExceptionStacktrace(stackTrace())))
	}
	s.AddEvent(semconv.ExceptionEventName, opts...)
}

// AddLink links another span, the oldest link dropped over LinkCountLimit.
func (s *lightSpan) AddLink(link trace.Link) {
	if !link.SpanContext.IsValid() && len(link.Attributes) == 0 && link.SpanContext.TraceState().Len() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	l := sdktrace.Link{SpanContext: link.SpanContext, Attributes: link.Attributes}
	if limit := s.tracer.limits.AttributePerLinkCountLimit; limit >= 0 && len(l.Attributes) > limit {
		l.DroppedAttributeCount = len(l.Attributes) - limit
		l.Attributes = l.Attributes[:limit]
	}
	s.rec.links, s.rec.droppedLinks = evicting(s.rec.links, s.rec.droppedLinks, s.tracer.limits.LinkCountLimit, l)
}

// evicting adds x to xs, dropping the oldest when xs holds limit already.
func evicting[T any](xs []T, dropped, limit int, x T) ([]T, int) {
	switch {
	case limit == 0:
		return xs, dropped + 1
	case limit > 0 && len(xs) >= limit:
		copy(xs, xs[1:])
		xs[len(xs)-1] = x
		return xs, dropped + 1
	}
	return append(xs, x), dropped
}

// End ends the span and, when sampled, writes it into the export. A panic
// going through a deferred End is recorded as an exception event and goes
// on, as with the SDK's spans.
func (s *lightSpan) End(opts ...trace.SpanEndOption) {
	end := s.rec.start.Add(time.Since(s.rec.start)) // the monotonic clock's duration
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	cfg := trace.NewSpanEndConfig(opts...)
	if recovered := recover(); recovered != nil {
		defer panic(recovered)
		attrs := []attribute.KeyValue{semconv.ExceptionType(typeName(recovered)), semconv.ExceptionMessage(fmt.Sprint(recovered))}
		if cfg.StackTrace() {
			attrs = append(attrs, semconv.ExceptionStacktrace(stackTrace()))
		}
		s.addEvent(semconv.ExceptionEventName, trace.WithAttributes(attrs...))
	}
	if at := cfg.Timestamp(); !at.IsZero() {
		end = at
	}
	s.rec.end = end
	s.ended = true
	if s.rec.sc.IsSampled() {
		s.tracer.batcher.add(&s.rec)
	}
	attrs, pooled := s.rec.attrs, s.pooled
	s.rec.attrs, s.pooled = nil, nil
	s.mu.Unlock()
	clear(attrs)
	*pooled = attrs[:0]
	lightAttrs.Put(pooled)
}

// typeName names v's type as the SDK's exception events do.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

func stackTrace() string {
	buf := make([]byte, 2048)
	return string(buf[:runtime.Stack(buf, false)])
}
