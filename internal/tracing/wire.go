package tracing

import (
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The encoding here is OTLP's protobuf (opentelemetry-proto, trace/v1,
// common/v1, resource/v1) written straight from the SDK's spans: the
// same messages, fields and presence as the SDK's OTLP exporter sends
// (its tracetransform and proto.Marshal), which TestWireMatchesTheSDK
// checks field by field, except that invalid UTF-8 is replaced
// (validUTF8). The SDK's way builds a tree of proto structs for every
// span (three allocations per attribute) and marshals it by reflection:
// with every request traced, that was a sixth of the service's CPU.

// Field numbers of the OTLP messages written.
const (
	resourceSpansResource   protowire.Number = 1
	resourceSpansScopeSpans protowire.Number = 2
	resourceSpansSchemaURL  protowire.Number = 3

	resourceAttributes protowire.Number = 1

	scopeSpansScope     protowire.Number = 1
	scopeSpansSpans     protowire.Number = 2
	scopeSpansSchemaURL protowire.Number = 3

	scopeName       protowire.Number = 1
	scopeVersion    protowire.Number = 2
	scopeAttributes protowire.Number = 3

	spanTraceID           protowire.Number = 1
	spanSpanID            protowire.Number = 2
	spanTraceState        protowire.Number = 3
	spanParentSpanID      protowire.Number = 4
	spanName              protowire.Number = 5
	spanKind              protowire.Number = 6
	spanStart             protowire.Number = 7
	spanEnd               protowire.Number = 8
	spanAttributes        protowire.Number = 9
	spanDroppedAttributes protowire.Number = 10
	spanEvents            protowire.Number = 11
	spanDroppedEvents     protowire.Number = 12
	spanLinks             protowire.Number = 13
	spanDroppedLinks      protowire.Number = 14
	spanStatus            protowire.Number = 15
	spanFlags             protowire.Number = 16

	eventTime              protowire.Number = 1
	eventName              protowire.Number = 2
	eventAttributes        protowire.Number = 3
	eventDroppedAttributes protowire.Number = 4

	linkTraceID           protowire.Number = 1
	linkSpanID            protowire.Number = 2
	linkAttributes        protowire.Number = 4
	linkDroppedAttributes protowire.Number = 5
	linkFlags             protowire.Number = 6

	statusMessage protowire.Number = 2
	statusCode    protowire.Number = 3

	keyValueKey   protowire.Number = 1
	keyValueValue protowire.Number = 2

	anyString protowire.Number = 1
	anyBool   protowire.Number = 2
	anyInt    protowire.Number = 3
	anyDouble protowire.Number = 4
	anyArray  protowire.Number = 5
	anyKvlist protowire.Number = 6
	anyBytes  protowire.Number = 7

	arrayValues  protowire.Number = 1
	kvlistValues protowire.Number = 1
)

// Span flags: the low byte is W3C's trace flags; these say whether the
// parent is remote, and that the span knows it.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// resourceSpans groups spans as the SDK's exporter does: by resource, then
// by instrumentation scope, each in the order first seen, and returns one
// tracepb.ResourceSpans per resource whose whole content is the encoding,
// held as the message's unknown fields. proto.Marshal writes unknown
// fields as they are, so the SDK's OTLP clients (HTTP and gRPC) send
// these bytes unchanged, inside the ExportTraceServiceRequest they make.
// The encoding is appended to buf[:0], which it returns too, grown, for
// the next batch: the messages hold parts of it until they are marshalled.
func resourceSpans(buf []byte, spans []sdktrace.ReadOnlySpan) ([]*tracepb.ResourceSpans, []byte) {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourceGroup struct {
		key      attribute.Distinct
		resource *resource.Resource
		scopes   []scopeGroup
	}
	var groups []resourceGroup
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		key := res.Equivalent()
		r := slices.IndexFunc(groups, func(g resourceGroup) bool { return g.key == key })
		if r < 0 {
			groups = append(groups, resourceGroup{key: key, resource: res})
			r = len(groups) - 1
		}
		g := &groups[r]
		scope := s.InstrumentationScope()
		i := slices.IndexFunc(g.scopes, func(sg scopeGroup) bool { return sg.scope == scope })
		if i < 0 {
			g.scopes = append(g.scopes, scopeGroup{scope: scope})
			i = len(g.scopes) - 1
		}
		g.scopes[i].spans = append(g.scopes[i].spans, s)
	}
	out := make([]*tracepb.ResourceSpans, 0, len(groups))
	b := buf[:0]
	if b == nil {
		// About 600 bytes a span: one growth or none for most batches.
		b = make([]byte, 0, 600*len(spans)+256)
	}
	for _, g := range groups {
		// Each resource's message is its part of b: a part stays where it
		// was written when a later one grows b into a new array.
		first := len(b)
		if g.resource != nil {
			b = appendResource(b, g.resource)
		}
		for _, sg := range g.scopes {
			var at int
			b, at = openField(b, resourceSpansScopeSpans)
			b = appendScope(b, sg.scope)
			for _, s := range sg.spans {
				rec := recordOf(s)
				b = appendSpan(b, &rec)
			}
			b = appendString(b, scopeSpansSchemaURL, sg.scope.SchemaURL)
			b = closeField(b, at)
		}
		if g.resource != nil {
			b = appendString(b, resourceSpansSchemaURL, g.resource.SchemaURL())
		}
		rs := &tracepb.ResourceSpans{}
		rs.ProtoReflect().SetUnknown(protoreflect.RawFields(b[first:len(b):len(b)]))
		out = append(out, rs)
	}
	return out, b
}

// appendResource writes a ResourceSpans' resource field.
func appendResource(b []byte, res *resource.Resource) []byte {
	b, at := openField(b, resourceSpansResource)
	for iter := res.Iter(); iter.Next(); {
		b = appendKeyValue(b, resourceAttributes, iter.Attribute())
	}
	return closeField(b, at)
}

func appendScope(b []byte, scope instrumentation.Scope) []byte {
	if scope == (instrumentation.Scope{}) {
		return b
	}
	b, at := openField(b, scopeSpansScope)
	b = appendString(b, scopeName, scope.Name)
	b = appendString(b, scopeVersion, scope.Version)
	for iter := scope.Attributes.Iter(); iter.Next(); {
		b = appendKeyValue(b, scopeAttributes, iter.Attribute())
	}
	return closeField(b, at)
}

// spanRecord is what the encoding reads of a span: an SDK span's
// (recordOf) or a light span's own (lightSpan).
type spanRecord struct {
	sc, parent    trace.SpanContext
	name          string
	kind          trace.SpanKind
	start, end    time.Time
	attrs         []attribute.KeyValue
	droppedAttrs  int
	events        []sdktrace.Event
	droppedEvents int
	links         []sdktrace.Link
	droppedLinks  int
	status        sdktrace.Status
}

func recordOf(s sdktrace.ReadOnlySpan) spanRecord {
	return spanRecord{sc: s.SpanContext(), parent: s.Parent(), name: s.Name(), kind: s.SpanKind(),
		start: s.StartTime(), end: s.EndTime(), attrs: s.Attributes(), droppedAttrs: s.DroppedAttributes(),
		events: s.Events(), droppedEvents: s.DroppedEvents(), links: s.Links(), droppedLinks: s.DroppedLinks(),
		status: s.Status()}
}

func appendSpan(b []byte, s *spanRecord) []byte {
	b, at := openField(b, scopeSpansSpans)
	traceID, spanID := s.sc.TraceID(), s.sc.SpanID()
	b = appendBytes(b, spanTraceID, traceID[:])
	b = appendBytes(b, spanSpanID, spanID[:])
	b = appendString(b, spanTraceState, s.sc.TraceState().String())
	if parentID := s.parent.SpanID(); parentID.IsValid() {
		b = appendBytes(b, spanParentSpanID, parentID[:])
	}
	b = appendString(b, spanName, s.name)
	b = appendVarint(b, spanKind, kindNumber(s.kind))
	b = appendTime(b, spanStart, s.start)
	b = appendTime(b, spanEnd, s.end)
	for _, kv := range s.attrs {
		b = appendKeyValue(b, spanAttributes, kv)
	}
	b = appendVarint(b, spanDroppedAttributes, count(s.droppedAttrs))
	for _, e := range s.events {
		var ev int
		b, ev = openField(b, spanEvents)
		b = appendTime(b, eventTime, e.Time)
		b = appendString(b, eventName, e.Name)
		for _, kv := range e.Attributes {
			b = appendKeyValue(b, eventAttributes, kv)
		}
		b = appendVarint(b, eventDroppedAttributes, count(e.DroppedAttributeCount))
		b = closeField(b, ev)
	}
	b = appendVarint(b, spanDroppedEvents, count(s.droppedEvents))
	for _, l := range s.links {
		var lk int
		b, lk = openField(b, spanLinks)
		linkTrace, linkSpan := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, linkTraceID, linkTrace[:])
		b = appendBytes(b, linkSpanID, linkSpan[:])
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, linkAttributes, kv)
		}
		b = appendVarint(b, linkDroppedAttributes, count(l.DroppedAttributeCount))
		b = protowire.AppendTag(b, linkFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, flags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = closeField(b, lk)
	}
	b = appendVarint(b, spanDroppedLinks, count(s.droppedLinks))
	var st int
	b, st = openField(b, spanStatus)
	b = appendString(b, statusMessage, s.status.Description)
	b = appendVarint(b, statusCode, statusNumber(s.status.Code))
	b = closeField(b, st)
	b = protowire.AppendTag(b, spanFlags, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, flags(s.sc.TraceFlags(), s.parent))
	return closeField(b, at)
}
