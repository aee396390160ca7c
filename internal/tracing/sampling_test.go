package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/tracing"
)

// fromEnv is the Tracing the service opens when the environment asks for
// traces and samples as sampler and arg say; its spans go nowhere.
func fromEnv(t *testing.T, sampler, arg string) (tracing.Tracing, error) {
	t.Helper()
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_TRACES_SAMPLER", sampler)
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", arg)
	tr, err := tracing.Open(context.Background(), true, nil)
	if err == nil {
		t.Cleanup(tr.Flush)
	}
	return tr, err
}

// seen is what the handler behind a Tracing's server spans found in the
// last request it was given: whether its context's span was recording,
// that span's context, and whether it was the very request served (no
// copy made). The span itself ends when the handler returns.
type seen struct {
	recording bool
	span      trace.SpanContext
	asSent    bool
}

// spied is tr's handler around one that notes what it is given.
func spied(tr tracing.Tracing) (serve func(*http.Request) seen) {
	var last seen
	var sent *http.Request
	h := tr.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		span := trace.SpanFromContext(r.Context())
		last = seen{recording: span.IsRecording(), span: span.SpanContext(), asSent: r == sent}
	}))
	return func(r *http.Request) seen {
		sent = r
		h.ServeHTTP(httptest.NewRecorder(), r)
		return last
	}
}

// TestSamplingFirstKeepsWhatTheSamplerKeeps: the server spans ask the
// sampler before they start a span, with an id they drew, and the span
// started for a kept request has that id, so the sampler's second look,
// in the SDK, keeps it too. At a ratio of one half, about half the root
// requests are traced (a span that drew its own id again would be kept a
// quarter of the time), every traced one has a trace id the ratio keeps,
// and every dropped one goes on as it came, with no span.
func TestSamplingFirstKeepsWhatTheSamplerKeeps(t *testing.T) {
	tr, err := fromEnv(t, "parentbased_traceidratio", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	serve := spied(tr)
	ratio := sdktrace.TraceIDRatioBased(0.5)
	const requests = 2000
	kept := 0
	for range requests {
		s := serve(httptest.NewRequest(http.MethodPost, "/reservations", nil))
		if !s.recording {
			if s.span.IsValid() || !s.asSent {
				t.Fatalf("a dropped request went on with a span (%v) or as a copy (%v)", s.span.IsValid(), !s.asSent)
			}
			continue
		}
		kept++
		got := ratio.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: s.span.TraceID()})
		if got.Decision != sdktrace.RecordAndSample {
			t.Fatalf("trace %s was kept, but a ratio of 0.5 drops its id", s.span.TraceID())
		}
	}
	// Binomial(2000, 0.5): a standard deviation of 22; a second draw
	// would keep about 500.
	if kept < 850 || kept > 1150 {
		t.Errorf("%d of %d requests traced at a ratio of 0.5, want about 1000", kept, requests)
	}
}

// TestSamplingFirstFollowsTheCaller: under a parent-based sampler, a
// caller's sampled traceparent makes a span in the caller's trace and an
// unsampled one makes none, whatever the root ratio.
func TestSamplingFirstFollowsTheCaller(t *testing.T) {
	tr, err := fromEnv(t, "parentbased_always_off", "")
	if err != nil {
		t.Fatal(err)
	}
	serve := spied(tr)
	request := func(flags string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/schedules", nil)
		if flags != "" {
			r.Header.Set("traceparent", "00-"+callerTrace+"-"+callerSpan+"-"+flags)
		}
		return r
	}
	if s := serve(request("01")); !s.recording || s.span.TraceID().String() != callerTrace {
		t.Errorf("a sampled caller's request: recording %v, trace %s; want a span in trace %s",
			s.recording, s.span.TraceID(), callerTrace)
	}
	for _, flags := range []string{"00", ""} {
		if s := serve(request(flags)); s.span.IsValid() || !s.asSent {
			t.Errorf("traceparent flags %q: the request went on with a span (%v) or as a copy (%v), want neither",
				flags, s.span.IsValid(), !s.asSent)
		}
	}
}

// TestSamplersOfTheEnvironment: each sampler OTEL_TRACES_SAMPLER names
// traces a root request as it says, and a value the SDK would replace
// with its own choice stops the start.
func TestSamplersOfTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		sampler, arg string
		traced       bool
	}{
		{"", "", true}, // parentbased_always_on, the SDK's default
		{"parentbased_always_on", "", true},
		{"always_on", "", true},
		{"traceidratio", "", true}, // a ratio of 1
		{"parentbased_traceidratio", "1", true},
		{" ParentBased_TraceIDRatio ", " 0 ", false},
		{"traceidratio", "0", false},
		{"parentbased_always_off", "", false},
		{"always_off", "", false},
	} {
		tr, err := fromEnv(t, c.sampler, c.arg)
		if err != nil {
			t.Errorf("OTEL_TRACES_SAMPLER=%q _ARG=%q: %v", c.sampler, c.arg, err)
			continue
		}
		if s := spied(tr)(httptest.NewRequest(http.MethodGet, "/schedules", nil)); s.recording != c.traced {
			t.Errorf("OTEL_TRACES_SAMPLER=%q _ARG=%q: traced %v, want %v", c.sampler, c.arg, s.recording, c.traced)
		}
	}
	for _, c := range []struct{ sampler, arg string }{
		{"jaeger_remote", ""},
		{"parentbased_traceidratio", "1%"},
		{"parentbased_traceidratio", "-0.1"},
		{"traceidratio", "1.5"},
	} {
		if _, err := fromEnv(t, c.sampler, c.arg); err == nil {
			t.Errorf("OTEL_TRACES_SAMPLER=%q _ARG=%q: started, want an error", c.sampler, c.arg)
		}
	}
}

// TestDroppedRequestAllocations: with the service's own provider, a
// request the sampler drops costs the heap nothing beyond the router's.
func TestDroppedRequestAllocations(t *testing.T) {
	tr, err := fromEnv(t, "parentbased_traceidratio", "0")
	if err != nil {
		t.Fatal(err)
	}
	if extra := allocationsBeyondRouter(tr); extra > 0 {
		t.Errorf("a dropped request allocates %.0f more than the bare router, want none", extra)
	}
}
