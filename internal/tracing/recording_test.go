package tracing_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/memlock"
	"github.com/seatlock/seatlock/internal/tracing"
)

// contexts are the three a call can come with: none of a trace (a
// periodic job), a request the sampler dropped, a sampled request.
func contexts(t *testing.T, tp trace.TracerProvider) (none, dropped, sampled context.Context) {
	t.Helper()
	none = context.Background()
	tid, _ := trace.TraceIDFromHex(callerTrace)
	sid, _ := trace.SpanIDFromHex(callerSpan)
	dropped = trace.ContextWithSpanContext(none, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	sampled, span := tp.Tracer("request").Start(none, "request")
	t.Cleanup(func() { span.End() })
	if dropped := trace.SpanFromContext(dropped); dropped.IsRecording() || !dropped.SpanContext().IsValid() {
		t.Fatal("the dropped request's span should be valid and not recording")
	}
	return none, dropped, sampled
}

// TestLockerTracesSampledRequestsOnly: the lock client's calls outside a
// recorded trace make no span and get the lease itself, unwrapped; a
// sampled request's make lock.acquire and lock.release.
func TestLockerTracesSampledRequestsOnly(t *testing.T) {
	tr, tp, rec := recordedWith(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	client := lock.New(memlock.New(), lock.Config{})
	defer client.Close()
	locker := tr.Locker(client)
	none, dropped, sampled := contexts(t, tp)
	opts := lock.Options{TTL: time.Minute}

	for i, ctx := range []context.Context{none, dropped} {
		lease, err := locker.Acquire(ctx, "seat:1", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := reflect.TypeOf(lease).Elem().PkgPath(); got != reflect.TypeFor[lock.Client]().PkgPath() {
			t.Errorf("context %d: the lease is wrapped in a %T", i, lease)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		multi, err := locker.AcquireAll(ctx, []string{"seat:2", "seat:3"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := reflect.TypeOf(multi).Elem().PkgPath(); got != reflect.TypeFor[lock.Client]().PkgPath() {
			t.Errorf("context %d: the multi-lease is wrapped in a %T", i, multi)
		}
		if err := multi.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rec.Started()); n != 1 {
		t.Fatalf("%d spans started outside recorded traces (besides the request's)", n-1)
	}

	lease, err := locker.Acquire(sampled, "seat:1", opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(sampled); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if len(names) != 2 || names[0] != tracing.SpanAcquire || names[1] != tracing.SpanRelease {
		t.Errorf("a sampled request's acquisition and release made %v", names)
	}
}
