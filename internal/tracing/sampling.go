package tracing

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// samplerFromEnv is the sampler OTEL_TRACES_SAMPLER and _ARG name, read as
// the SDK reads them, except that a value the SDK would log and replace
// (with every request traced) stops the start. The service builds it,
// rather than leave it to the SDK, because serverSpans asks it first.
func samplerFromEnv() (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("tracing: OTEL_TRACES_SAMPLER_ARG=%q is not a ratio from 0 to 1", arg)
		}
		return sdktrace.TraceIDRatioBased(v), nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		root, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(root), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return ratio()
	}
	return nil, fmt.Errorf("tracing: OTEL_TRACES_SAMPLER=%q is none of always_on, always_off, traceidratio, "+
		"parentbased_always_on, parentbased_always_off, parentbased_traceidratio", name)
}

// sampleFirst asks sampler about a request before its span is started
// (serverSpans): whether it keeps it, and the context to start the span
// with. ctx holds the caller's span context when the request carried one
// (carried). A root request is asked about with no parent context (looking
// through the request's for a span costs more than the rest of the
// decision) and a trace id drawn here, which the context returned carries
// for drawnIDs to give the span: the sampler's second look, in the SDK's
// Start, sees what the first saw and keeps it too (a ratio sampler decides
// by the id).
func sampleFirst(ctx context.Context, carried bool, sampler sdktrace.Sampler, name string) (context.Context, bool) {
	params := sdktrace.SamplingParameters{ParentContext: context.Background(), Name: name, Kind: trace.SpanKindServer}
	var parent trace.SpanContext
	if carried {
		parent, params.ParentContext = trace.SpanContextFromContext(ctx), ctx
	}
	if parent.IsValid() {
		params.TraceID = parent.TraceID()
	} else {
		params.TraceID = newTraceID()
	}
	if sampler.ShouldSample(params).Decision == sdktrace.Drop {
		return ctx, false
	}
	if !parent.IsValid() {
		ctx = context.WithValue(ctx, drawnTraceID{}, params.TraceID)
	}
	return ctx, true
}

// drawnTraceID is the context key of the trace id sampleFirst drew.
type drawnTraceID struct{}

// drawnIDs is the provider's ID generator: random ids, except a root
// span's trace id when sampleFirst drew it.
type drawnIDs struct{}

func (drawnIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if tid, ok := ctx.Value(drawnTraceID{}).(trace.TraceID); ok {
		return tid, newSpanID()
	}
	return newTraceID(), newSpanID()
}

func (drawnIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newTraceID() trace.TraceID {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
