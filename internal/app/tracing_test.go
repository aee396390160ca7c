package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/tracing"
)

// spanTree is the recorded spans of one trace, by parent.
type spanTree struct {
	t        *testing.T
	root     sdktrace.ReadOnlySpan
	children map[trace.SpanID][]sdktrace.ReadOnlySpan
}

// traceOf waits for the server span of the request answered with
// requestID (the handler ends it just after the answer is written) and
// returns its trace.
func traceOf(t *testing.T, rec *tracetest.SpanRecorder, requestID string) spanTree {
	t.Helper()
	var root sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(5 * time.Second); root == nil; {
		for _, s := range rec.Ended() {
			if s.SpanKind() == trace.SpanKindServer && attr(s, tracing.AttrRequestID).AsString() == requestID {
				root = s
			}
		}
		if root == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no server span for request %s among %d spans", requestID, len(rec.Ended()))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	tree := spanTree{t: t, root: root, children: map[trace.SpanID][]sdktrace.ReadOnlySpan{}}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == root.SpanContext().TraceID() && s != root {
			tree.children[s.Parent().SpanID()] = append(tree.children[s.Parent().SpanID()], s)
		}
	}
	for _, c := range tree.children {
		slices.SortFunc(c, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	}
	return tree
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// child is the only child of parent named name.
func (tr spanTree) child(parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	tr.t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, c := range tr.children[parent.SpanContext().SpanID()] {
		if c.Name() == name {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		tr.t.Fatalf("%s has %d children named %q, want 1; the trace:\n%s", parent.Name(), len(found), name, tr)
	}
	return found[0]
}

// scoped are the children of parent made by the instrumentation scope
// whose name contains scope.
func (tr spanTree) scoped(parent sdktrace.ReadOnlySpan, scope string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, c := range tr.children[parent.SpanContext().SpanID()] {
		if strings.Contains(c.InstrumentationScope().Name, scope) {
			out = append(out, c)
		}
	}
	return out
}

// String is the trace as an indented tree with durations and the
// attributes that tell the story (docs/operations.md shows one).
func (tr spanTree) String() string {
	var b strings.Builder
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		fmt.Fprintf(&b, "%s%-*s %7.2f ms", strings.Repeat("  ", depth), 34-2*depth, s.Name(),
			float64(s.EndTime().Sub(s.StartTime()).Microseconds())/1000)
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case tracing.AttrLockOutcome, tracing.AttrLockFence, tracing.AttrLockWaitedMS, postgres.AttrGroupSize,
				"http.response.status_code", "db.operation.name", "db.operation", "db.system", "db.system.name":
				fmt.Fprintf(&b, "  %s=%s", kv.Key, kv.Value.String())
			}
		}
		b.WriteString("\n")
		for _, c := range tr.children[s.SpanContext().SpanID()] {
			walk(c, depth+1)
		}
	}
	walk(tr.root, 0)
	return b.String()
}

func newTracedHarness(t *testing.T) (*harness, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return newHarnessWith(t, 1, func(*config.Config) {}, app.WithTracerProvider(tp)), rec
}

// TestTraceOfOneBooking records the spans of one booking through the real
// service, Redis and PostgreSQL, and checks its tree: the server span
// named after the route is the root, with the lock acquisition (its fence,
// acquired) and its Redis call, the group write and its statement, and
// the seal and its Redis call under it. A second request for the seat is
// refused by the seal, and its trace says so.
func TestTraceOfOneBooking(t *testing.T) {
	h, rec := newTracedHarness(t)
	schedule := h.createScheduleDirect(10)
	resp := h.reserve(0, "alice", schedule, 4)
	if resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	tr := traceOf(t, rec, resp.header.Get("X-Request-Id"))
	t.Logf("the trace of one booking:\n%s", tr)

	root := tr.root
	if root.Name() != "POST /reservations" {
		t.Errorf("server span named %q, want %q", root.Name(), "POST /reservations")
	}
	if root.Parent().IsValid() {
		t.Errorf("server span has a parent %v; without traceparent it is the root", root.Parent())
	}
	if got := attr(root, "http.route").AsString(); got != "/reservations" {
		t.Errorf("http.route = %q", got)
	}
	acquire := tr.child(root, tracing.SpanAcquire)
	if got := attr(acquire, tracing.AttrLockOutcome).AsString(); got != "acquired" {
		t.Errorf("lock.acquire outcome = %q, want acquired", got)
	}
	fence := attr(acquire, tracing.AttrLockFence).AsInt64()
	if fence <= 0 {
		t.Errorf("lock.acquire fence = %d, want > 0", fence)
	}
	if got := attr(acquire, tracing.AttrLockKey).AsString(); !strings.Contains(got, fmt.Sprintf("seat:%d", 4)) {
		t.Errorf("lock.acquire key = %q", got)
	}
	if len(tr.scoped(acquire, "redisotel")) == 0 {
		t.Errorf("no Redis command under lock.acquire:\n%s", tr)
	}
	group := tr.child(root, postgres.SpanGroupWrite)
	if got := attr(group, postgres.AttrGroupSize).AsInt64(); got != 1 {
		t.Errorf("group size = %d, want 1", got)
	}
	if len(tr.scoped(group, "otelpgx")) == 0 {
		t.Errorf("no PostgreSQL statement under the group write:\n%s", tr)
	}
	seal := tr.child(root, tracing.SpanSeal)
	if got := attr(seal, tracing.AttrLockFence).AsInt64(); got != fence {
		t.Errorf("lock.seal fence = %d, want the acquisition's %d", got, fence)
	}
	if len(tr.scoped(seal, "redisotel")) == 0 {
		t.Errorf("no Redis command under lock.seal:\n%s", tr)
	}
	if !acquire.EndTime().Before(group.StartTime()) || !group.EndTime().Before(seal.StartTime()) {
		t.Errorf("want acquire, then group write, then seal:\n%s", tr)
	}

	taken := h.reserve(0, "bob", schedule, 4)
	expectProblem(t, taken, http.StatusConflict, "seat_taken")
	tr = traceOf(t, rec, taken.header.Get("X-Request-Id"))
	t.Logf("the trace of a request for the booked seat:\n%s", tr)
	if got := attr(tr.child(tr.root, tracing.SpanAcquire), tracing.AttrLockOutcome).AsString(); got != "sealed" {
		t.Errorf("second request's lock.acquire outcome = %q, want sealed", got)
	}
	// The waiting room's check (a Redis command right under the root) is
	// remembered for a second only: on a slow machine the second request
	// asks again. The booking's own work is the refused acquisition alone.
	direct := len(tr.children[tr.root.SpanContext().SpanID()]) - len(tr.scoped(tr.root, "redisotel"))
	if direct != 1 {
		t.Errorf("a sealed seat costs one span (the refused acquisition), got %d:\n%s", direct, tr)
	}
}

// TestTraceContinuesTheCallersTrace: a request with a W3C traceparent is
// served in the caller's trace, its server span a child of the caller's.
func TestTraceContinuesTheCallersTrace(t *testing.T) {
	h, rec := newTracedHarness(t)
	schedule := h.createScheduleDirect(10)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("alice", ""),
		contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule),
		header: map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01", "baggage": "tenant=cinema-7"}})
	if resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	tr := traceOf(t, rec, resp.header.Get("X-Request-Id"))
	if got := tr.root.SpanContext().TraceID().String(); got != traceID {
		t.Errorf("trace id %s, want the caller's %s", got, traceID)
	}
	if got := tr.root.Parent(); got.SpanID().String() != parentID || !got.IsRemote() {
		t.Errorf("server span's parent = %v (remote %v), want the caller's span %s", got.SpanID(), got.IsRemote(), parentID)
	}
	if tr.root.Name() != "POST /reservations" {
		t.Errorf("server span named %q", tr.root.Name())
	}
	tr.child(tr.root, tracing.SpanAcquire)
	tr.child(tr.root, postgres.SpanGroupWrite)
	tr.child(tr.root, tracing.SpanSeal)
}

// TestTracingOffRecordsNothing: without tracing (no OTEL_* variables, no
// WithTracerProvider) the handler is the API's own, not a traced one,
// and a booking records no span, even with a recording global provider.
func TestTracingOffRecordsNothing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(previous) })

	h := newHarness(t, 1)
	if h.cfg.Tracing {
		t.Fatal("tracing on in the test configuration")
	}
	a, err := app.New(context.Background(), h.cfg, slog.New(slog.DiscardHandler), app.WithoutJobs())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := reflect.TypeOf(a.Handler()); got.Kind() != reflect.Pointer || got.Elem().PkgPath() != reflect.TypeFor[httpapi.Options]().PkgPath() {
		t.Errorf("handler is a %v, want the API's own (package httpapi) unwrapped", got)
	}

	schedule := h.createScheduleDirect(10)
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token("alice", ""),
		contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":2}`, schedule),
		header: map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
	if resp.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", resp.status, resp.raw)
	}
	time.Sleep(50 * time.Millisecond)
	if spans := rec.Ended(); len(spans) > 0 {
		t.Errorf("tracing off recorded %d spans, the first %q", len(spans), spans[0].Name())
	}
	if spans := rec.Started(); len(spans) > 0 {
		t.Errorf("tracing off started %d spans, the first %q", len(spans), spans[0].Name())
	}
}

// TestTracingRequested: the OTEL_* variables that turn tracing on.
func TestTracingRequested(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "seatlock"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://jaeger:4318"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://jaeger:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://jaeger:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := config.TracingRequested(c.env); got != c.want {
			t.Errorf("TracingRequested(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestUnsampledBookingsRecordNothing: with a sampler that keeps only what
// a caller marks sampled, a booking without traceparent and one whose
// traceparent says "not sampled" start no span at all (no server, lock,
// Redis, statement or group span: nothing for the exporter), while a
// booking whose caller sampled it gets its whole tree in the caller's
// trace. The sampled booking goes last: once its trace is recorded, the
// two before it are answered, their spans started if ever.
func TestUnsampledBookingsRecordNothing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	h := newHarnessWith(t, 1, func(*config.Config) {}, app.WithTracerProvider(tp))
	schedule := h.createScheduleDirect(10)
	book := func(user string, seat int, traceparent string) response {
		t.Helper()
		header := map[string]string{}
		if traceparent != "" {
			header["traceparent"] = traceparent
		}
		resp := h.do(request{method: http.MethodPost, path: "/reservations", token: h.token(user, ""),
			contentType: "application/json", body: fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, schedule, seat),
			header: header})
		if resp.status != http.StatusOK {
			t.Fatalf("reserve seat %d: %d %s", seat, resp.status, resp.raw)
		}
		return resp
	}
	const sampledTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	book("alice", 1, "")
	book("bob", 2, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")
	sampled := book("carol", 3, "00-"+sampledTrace+"-00f067aa0ba902b7-01")

	tr := traceOf(t, rec, sampled.header.Get("X-Request-Id"))
	tr.child(tr.root, tracing.SpanAcquire)
	tr.child(tr.root, postgres.SpanGroupWrite)
	tr.child(tr.root, tracing.SpanSeal)
	for _, s := range rec.Started() {
		if got := s.SpanContext().TraceID().String(); got != sampledTrace {
			t.Errorf("span %q (%s) started in trace %s, not the sampled booking's", s.Name(),
				s.InstrumentationScope().Name, got)
		}
	}
}
