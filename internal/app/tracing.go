package app

import (
	"context"
	"net/http"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/tracing"
)

// tracer is the app's tracing: on with a tracer provider, off (nil tp)
// otherwise. Off, every method leaves what it is given as it is: no
// handler, pool, Redis client or lock client is wrapped, so tracing costs
// nothing then.
type tracer struct {
	tp trace.TracerProvider
}

// openTracing turns tracing on with the provider a test gave
// (WithTracerProvider), or with the SDK's as the OTEL_* variables
// configure it when they ask for traces (cfg.Tracing), installed as the
// global provider and propagator too; else it stays off.
func (a *App) openTracing(ctx context.Context, cfg config.Config, given trace.TracerProvider) (tracer, error) {
	if given != nil {
		return tracer{tp: given}, nil
	}
	if !cfg.Tracing {
		return tracer{}, nil
	}
	tp, err := tracing.NewProvider(ctx)
	if err != nil {
		return tracer{}, err
	}
	// Last of all, after the connections: what is buffered is flushed.
	a.flushTraces = func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracing.ShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(tracing.Propagator())
	return tracer{tp: tp}, nil
}

func (t tracer) on() bool { return t.tp != nil }

// poolOptions traces the pool's statements with otelpgx, within requests'
// traces only (tracing.ChildrenOnly).
func (t tracer) poolOptions() []postgres.PoolOption {
	if !t.on() {
		return nil
	}
	pgxTracer := otelpgx.NewTracer(otelpgx.WithTracerProvider(tracing.ChildrenOnly(t.tp)), otelpgx.WithQuerySpanNamePrefix())
	return []postgres.PoolOption{func(c *pgxpool.Config) { c.ConnConfig.Tracer = pgxTracer }}
}

// storeOptions makes a span of each group write of bookings.
func (t tracer) storeOptions() []postgres.StoreOption {
	if !t.on() {
		return nil
	}
	return []postgres.StoreOption{postgres.WithTracer(t.tp.Tracer(tracing.ScopeName))}
}

// redis traces client's commands with redisotel, within requests' traces
// only. Command arguments stay out of the spans (they carry user ids:
// rate limit keys, seal notes); the lock spans name the seat.
func (t tracer) redis(client redis.UniversalClient) error {
	if !t.on() {
		return nil
	}
	return redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(tracing.ChildrenOnly(t.tp)),
		redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
}

// locker makes spans of the use cases' lock acquisitions, seals and
// releases.
func (t tracer) locker(l reservation.SeatLocker) reservation.SeatLocker {
	if !t.on() {
		return l
	}
	return tracing.Locker(l, t.tp)
}

// routed names each request's span after its route (httpapi.Options.Routed).
func (t tracer) routed() func(http.Handler) http.Handler {
	if !t.on() {
		return nil
	}
	return tracing.RouteNames
}

// handler makes a server span of each request with otelhttp, a child of
// the caller's when it sent a W3C traceparent. Health, readiness and
// metrics requests (probes and scrapes) make none.
func (t tracer) handler(h http.Handler) http.Handler {
	if !t.on() {
		return h
	}
	return otelhttp.NewHandler(h, "http",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(tracing.Propagator()),
		otelhttp.WithSpanNameFormatter(tracing.SpanName),
		otelhttp.WithFilter(func(r *http.Request) bool {
			switch r.URL.Path {
			case "/healthz", "/readyz", "/metrics":
				return false
			}
			return true
		}))
}
