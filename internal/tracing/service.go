package tracing

import (
	"context"
	"net/http"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Tracing is the service's tracing as the app wires it: on with a tracer
// provider, off (the zero value) otherwise. Off, every method leaves what
// it is given as it is: no handler, pool, Redis client or lock client is
// wrapped, so tracing costs nothing then.
type Tracing struct {
	tp trace.TracerProvider
	// sampler is the provider's when Open built it (see serverSpans).
	sampler sdktrace.Sampler
	flush   func()
}

// Open turns tracing on with the provider a test gave (given), or with
// the SDK's as the OTEL_* variables configure it when they ask for traces
// (requested; config.Config.Tracing), installed as the global provider and
// propagator too; else it stays off.
func Open(ctx context.Context, requested bool, given trace.TracerProvider) (Tracing, error) {
	if given != nil {
		return Tracing{tp: given}, nil
	}
	if !requested {
		return Tracing{}, nil
	}
	tp, sampler, err := newProvider(ctx)
	if err != nil {
		return Tracing{}, err
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator())
	return Tracing{tp: tp, sampler: sampler, flush: func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}}, nil
}

// Flush sends the spans still buffered by the SDK provider Open built
// (not a given one); the app calls it last of all,
// after its connections are closed.
func (t Tracing) Flush() {
	if t.flush != nil {
		t.flush()
	}
}

func (t Tracing) on() bool { return t.tp != nil }

// PoolOptions traces the pool's statements with otelpgx, within
// sampled requests' traces only (recordedPgx).
func (t Tracing) PoolOptions() []postgres.PoolOption {
	if !t.on() {
		return nil
	}
	pgxTracer := recordedPgx{inner: otelpgx.NewTracer(otelpgx.WithTracerProvider(t.tp), otelpgx.WithQuerySpanNamePrefix())}
	return []postgres.PoolOption{func(c *pgxpool.Config) { c.ConnConfig.Tracer = pgxTracer }}
}

// StoreOptions makes a span of each group write of bookings.
func (t Tracing) StoreOptions() []postgres.StoreOption {
	if !t.on() {
		return nil
	}
	return []postgres.StoreOption{postgres.WithTracer(t.tp.Tracer(ScopeName))}
}

// Redis traces client's commands, pipelines and dials as redisotel does
// (redisSpans), within requests' traces only: a call under a request the
// sampler dropped costs a look at its context. Command arguments stay out
// of the spans (they carry user ids: rate limit keys, seal notes); the lock
// spans name the seat.
func (t Tracing) Redis(client redis.UniversalClient) error {
	if !t.on() {
		return nil
	}
	return instrumentRedis(client, t.tp)
}

// Locker makes spans of the use cases' lock acquisitions, seals and
// releases (see tracedLocker).
func (t Tracing) Locker(l reservation.SeatLocker) reservation.SeatLocker {
	if !t.on() {
		return l
	}
	return &tracedLocker{inner: l, tracer: t.tp.Tracer(ScopeName)}
}

// Routed names each request's span after its route
// (httpapi.Options.Routed; nil when off).
func (t Tracing) Routed() func(http.Handler) http.Handler {
	if !t.on() {
		return nil
	}
	return RouteNames
}

// Handler makes a server span of each request the sampler keeps, a child
// of the caller's when it sent a W3C traceparent (see serverSpans: a
// request not sampled costs a sampling decision and little else). Health,
// readiness and metrics requests (probes and scrapes) make none.
func (t Tracing) Handler(h http.Handler) http.Handler {
	if !t.on() {
		return h
	}
	return newServerSpans(h, t.tp.Tracer(ScopeName), t.sampler, Propagator())
}
