package tracing

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/redis/go-redis/extra/rediscmd/v9"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.24.0"
	"go.opentelemetry.io/otel/trace"
)

// redisScope is redisotel's scope, whose spans these are.
const redisScope = "github.com/redis/go-redis/extra/redisotel"

// instrumentRedis adds a redisSpans hook to client, or to each node of a
// Redis Cluster or Ring as it is made, as redisotel.InstrumentTracing does.
func instrumentRedis(client redis.UniversalClient, tp trace.TracerProvider) error {
	tracer := tp.Tracer(redisScope, trace.WithInstrumentationVersion("semver:"+redis.Version()))
	switch c := client.(type) {
	case *redis.Client:
		c.AddHook(newRedisSpans(tracer, c.Options()))
	case interface{ OnNewNode(func(*redis.Client)) }: // *redis.ClusterClient, *redis.Ring
		c.OnNewNode(func(node *redis.Client) { node.AddHook(newRedisSpans(tracer, node.Options())) })
	default:
		return fmt.Errorf("tracing: Redis client %T not supported", client)
	}
	return nil
}

// redisSpans is a go-redis hook making the spans redisotel makes (same
// names, kind, attributes and errors; statements and callers off), but
// only under a recording span, which it looks for first: redisotel's hook
// builds each command's attributes and a pipeline's command text before
// its tracer can say no span is wanted, and the clients' background work
// would otherwise make traces of its own.
type redisSpans struct {
	tracer trace.Tracer
	start  []trace.SpanStartOption // kind and the client's attributes, made once
}

func newRedisSpans(tracer trace.Tracer, opt *redis.Options) redisSpans {
	attrs := []attribute.KeyValue{semconv.DBSystemRedis}
	if host, port, err := net.SplitHostPort(opt.Addr); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(n))
		}
	}
	network := opt.Network
	if network == "tcp" {
		network = "redis"
	}
	attrs = append(attrs, semconv.DBConnectionString(network+"://"+opt.Addr))
	return redisSpans{tracer: tracer, start: []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}}
}

func (h redisSpans) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !recording(ctx) {
			return next(ctx, network, addr)
		}
		ctx, span := h.tracer.Start(ctx, "redis.dial", h.start...)
		defer span.End()
		conn, err := next(ctx, network, addr)
		recordRedisError(span, err)
		return conn, err
	}
}

func (h redisSpans) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !recording(ctx) || redisotel.DefaultCommandFilter(cmd) {
			return next(ctx, cmd)
		}
		ctx, span := h.tracer.Start(ctx, cmd.FullName(), h.start...)
		defer span.End()
		err := next(ctx, cmd)
		recordRedisError(span, err)
		return err
	}
}

func (h redisSpans) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !recording(ctx) {
			return next(ctx, cmds)
		}
		for _, cmd := range cmds {
			if redisotel.DefaultCommandFilter(cmd) {
				return next(ctx, cmds)
			}
		}
		summary, _ := rediscmd.CmdsString(cmds)
		opts := append(h.start[:len(h.start):len(h.start)],
			trace.WithAttributes(attribute.Int("db.redis.num_cmd", len(cmds))))
		ctx, span := h.tracer.Start(ctx, "redis.pipeline "+summary, opts...)
		defer span.End()
		err := next(ctx, cmds)
		recordRedisError(span, err)
		return err
	}
}

// recordRedisError marks span failed by err, if any, as redisotel does: a
// missing key (redis.Nil) is an answer, not a failure.
func recordRedisError(span trace.Span, err error) {
	if err != nil && err != redis.Nil {
		recordError(span, err)
		span.SetStatus(codes.Error, validUTF8(err.Error()))
	}
}
