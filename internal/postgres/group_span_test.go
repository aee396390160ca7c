package postgres_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// groupSpans writes, behind a first booking held in PostgreSQL's way (no
// trace of its own), one group of bookings made in ctxs, in that order,
// with a store that makes group spans with tp; it returns the group spans.
func groupSpans(t *testing.T, tp *sdktrace.TracerProvider, rec *tracetest.SpanRecorder, ctxs ...context.Context) []sdktrace.ReadOnlySpan {
	t.Helper()
	store, plain, gate := gatedStore(t, 1, 1, postgres.WithTracer(tp.Tracer("test")))
	s := mustSchedule(t, plain, 10) // the held first booking takes seat 9
	before := len(rec.Ended())
	first := holdFirstBooking(t, store, gate, s.ID())
	errs := make(chan error, len(ctxs))
	for i, ctx := range ctxs {
		// One at a time, each queued before the next: the group keeps their order.
		go func() {
			_, err := store.InsertReservation(ctx, reservation.NewReservation{ScheduleID: s.ID(), SeatID: i + 1,
				UserID: "bob", Fence: nextFence()})
			errs <- err
		}()
		waitPending(t, store, i+1)
	}
	close(gate.open)
	for range ctxs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range first() {
		if o.err != nil {
			t.Fatal(o.err)
		}
	}
	var groups []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended()[before:] {
		if sp.Name() == postgres.SpanGroupWrite {
			groups = append(groups, sp)
		}
	}
	return groups
}

// A group write's span is a child of its first sampled booking's span and
// links to the other sampled bookings' only: the bookings of requests the
// sampler dropped have no trace to lead to. A group with no sampled
// booking (the first booking alone, without a trace; a group of dropped
// requests) makes no span at all.
func TestGroupSpanFollowsSampledBookings(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	dropped := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}))
	a, spanA := tp.Tracer("request").Start(context.Background(), "request a")
	defer spanA.End()
	b, spanB := tp.Tracer("request").Start(context.Background(), "request b")
	defer spanB.End()

	groups := groupSpans(t, tp, rec, dropped, a, dropped, b)
	if len(groups) != 1 {
		t.Fatalf("%d group spans, want the mixed group's alone", len(groups))
	}
	g := groups[0]
	if g.Parent().SpanID() != spanA.SpanContext().SpanID() {
		t.Errorf("group span's parent %v, want the first sampled booking's %v", g.Parent().SpanID(), spanA.SpanContext().SpanID())
	}
	if links := g.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != spanB.SpanContext().SpanID() {
		t.Errorf("group span links %v, want the other sampled booking's alone", links)
	}
	for _, kv := range g.Attributes() {
		if kv.Key == postgres.AttrGroupSize && kv.Value.AsInt64() != 4 {
			t.Errorf("group size %d, want 4", kv.Value.AsInt64())
		}
	}

	if groups := groupSpans(t, tp, rec, dropped, dropped, dropped); len(groups) != 0 {
		t.Errorf("a group of dropped bookings made %d spans", len(groups))
	}
}
