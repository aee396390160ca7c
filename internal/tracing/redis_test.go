package tracing_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/tracing"
)

// The tests' Redis: TEST_REDIS_URL, or a server of this test binary's own,
// started on first use and stopped at the end.
func TestMain(m *testing.M) { lockenv.Run(m) }

// redisCalls makes, under ctx, what the service asks of Redis: a command,
// a command answered redis.Nil, a failing command, a pipeline, a failing
// pipeline, and a script new to Redis, which go-redis sends by its hash,
// is refused, and sends again whole.
func redisCalls(ctx context.Context, client *redis.Client, key string) {
	client.Set(ctx, key, "1", 0)
	client.Get(ctx, key+":missing")
	client.Incr(ctx, key)
	client.HGet(ctx, key, "field")
	pipe := client.Pipeline()
	pipe.Incr(ctx, key)
	pipe.Expire(ctx, key, 60e9)
	pipe.Get(ctx, key)
	_, _ = pipe.Exec(ctx)
	bad := client.Pipeline()
	bad.Get(ctx, key)
	bad.HGet(ctx, key, "field")
	_, _ = bad.Exec(ctx)
	_ = redis.NewScript("return redis.call('GET', KEYS[1]) -- "+key).Run(ctx, client, []string{key}).Err()
}

// newRedis is a client of the test Redis of its own, so that a dial is
// among its first calls.
func newRedis(t *testing.T) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(lockenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opt)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// TestRedisSpansAsRedisotelMadeThem: under a sampled request, the service's
// Redis hook makes the spans redisotel made (as Tracing.Redis configured
// it before: statements and callers off, spans under recording spans
// only), with
// the same names, kinds, statuses, events, attributes and scope, so that
// dashboards and queries over those spans still hold.
func TestRedisSpansAsRedisotelMadeThem(t *testing.T) {
	run := func(instrument func(*redis.Client, trace.TracerProvider) error, key string) []sdktrace.ReadOnlySpan {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		client := newRedis(t)
		if err := instrument(client, tp); err != nil {
			t.Fatal(err)
		}
		ctx, request := tp.Tracer("request").Start(context.Background(), "request")
		redisCalls(ctx, client, key)
		request.End()
		var spans []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() != "request" {
				spans = append(spans, s)
			}
		}
		return spans
	}
	ours := run(func(c *redis.Client, tp trace.TracerProvider) error {
		tr, err := tracing.Open(context.Background(), false, tp)
		if err != nil {
			return err
		}
		return tr.Redis(c)
	}, "tracing-test:ours")
	theirs := run(func(c *redis.Client, tp trace.TracerProvider) error {
		return redisotel.InstrumentTracing(c, redisotel.WithTracerProvider(childrenOnly{tp}),
			redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
	}, "tracing-test:theirs")

	describe := func(spans []sdktrace.ReadOnlySpan) []string {
		var out []string
		for _, s := range spans {
			var events []string
			for _, e := range s.Events() {
				events = append(events, e.Name)
			}
			attrs := strings.Join(attributes(s), " ")
			out = append(out, strings.Join([]string{s.Name(), s.SpanKind().String(), s.Status().Code.String(),
				s.Status().Description, strings.Join(events, ","), attrs,
				s.InstrumentationScope().Name, s.InstrumentationScope().Version}, " | "))
		}
		return out
	}
	got, want := describe(ours), describe(theirs)
	if len(want) < 8 {
		t.Fatalf("redisotel made %d spans, fewer than the calls made:\n%s", len(want), strings.Join(want, "\n"))
	}
	if !slices.Equal(got, want) {
		t.Errorf("spans\n%s\nwant redisotel's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "redis.pipeline ") }) ||
		!slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "| Error |") }) {
		t.Errorf("want a pipeline and a failure among the spans:\n%s", strings.Join(got, "\n"))
	}
}

// childrenOnly is how Tracing.Redis gave redisotel its tracers: they start
// a span only under a recording one.
type childrenOnly struct{ trace.TracerProvider }

func (p childrenOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return childrenOnlyTracer{p.TracerProvider.Tracer(name, opts...)}
}

type childrenOnlyTracer struct{ trace.Tracer }

func (t childrenOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.Tracer.Start(ctx, name, opts...)
}

// TestRedisSpansUnderRecordingSpansOnly: outside a recorded trace (no span,
// or a request the sampler dropped) the hook makes no span, and the calls
// still work; under a sampled request each call is a child of its span.
func TestRedisSpansUnderRecordingSpansOnly(t *testing.T) {
	tr, tp, rec := recordedWith(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	none, dropped, sampled := contexts(t, tp)
	client := newRedis(t)
	if err := tr.Redis(client); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []context.Context{none, dropped} {
		if err := client.Set(ctx, "tracing-test:quiet", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "tracing-test:quiet")
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(rec.Started()); n != 1 {
		t.Fatalf("%d spans started outside a recorded trace, want the sampled request's alone", n)
	}
	if err := client.Get(sampled, "tracing-test:quiet").Err(); err != nil {
		t.Fatal(err)
	}
	parent := trace.SpanContextFromContext(sampled).SpanID()
	started := rec.Started()[1:]
	if len(started) != 1 || started[0].Name() != "get" || started[0].Parent().SpanID() != parent {
		var names []string
		for _, s := range started {
			names = append(names, s.Name())
		}
		t.Errorf("under a sampled request: spans %v, want one get under the request's", names)
	}
}

// TestRedisOfAnUnknownClient: a client the hook cannot instrument is an
// error, not a client silently untraced.
func TestRedisOfAnUnknownClient(t *testing.T) {
	tr, err := tracing.Open(context.Background(), false, sdktrace.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	var unknown struct{ redis.UniversalClient }
	if err := tr.Redis(unknown); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("Redis(%T) = %v, want a not-supported error", unknown, err)
	}
}

// TestRedisSpansOfAClusterClient: with Redis Cluster, each node's client
// gets the hook as the cluster client makes it, and a sampled request's
// command is a span naming the node that answered.
func TestRedisSpansOfAClusterClient(t *testing.T) {
	tr, tp, rec := recordedWith(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	cluster := lockenv.RedisCluster(t)
	if err := tr.Redis(cluster); err != nil {
		t.Fatal(err)
	}
	_, dropped, sampled := contexts(t, tp)
	if err := cluster.Set(dropped, "tracing-test:{cluster}", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Get(sampled, "tracing-test:{cluster}").Err(); err != nil {
		t.Fatal(err)
	}
	var gets []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "set" {
			t.Errorf("a span of the dropped request's set")
		}
		if s.Name() == "get" {
			gets = append(gets, s)
		}
	}
	if len(gets) != 1 || !slices.ContainsFunc(attributes(gets[0]), func(a string) bool { return strings.HasPrefix(a, "server.port=") }) {
		t.Fatalf("want one get span naming its node; got %d", len(gets))
	}
}
