// Package app wires the adapters to the use cases and runs the HTTP server
// and the periodic jobs: the only place that knows every concrete type.
package app

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/httpapi/seatstream"
	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockmetrics"
	"github.com/seatlock/seatlock/internal/lock/periodic"
	"github.com/seatlock/seatlock/internal/opsmetrics"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/ratelimit"
	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/seatmap"
	"github.com/seatlock/seatlock/internal/tracing"
	"github.com/seatlock/seatlock/internal/waitroom"
	"github.com/seatlock/seatlock/internal/waitroom/redisroom"
	"github.com/seatlock/seatlock/internal/webhook"
	"github.com/seatlock/seatlock/internal/webhook/dispatch"
)

// A request may wait LOCK_MAX_WAIT for a seat and then needs time for its
// own work (workTimeout); WriteTimeout leaves room for that whole request to
// write its answer.
const (
	workTimeout = 10 * time.Second
	writeSlack  = 10 * time.Second
)

// App is one running instance of the service.
type App struct {
	log     *slog.Logger
	handler http.Handler
	jobs    *periodic.Runner
	// relay relays the seat_changes outbox to the live seat map; nil
	// without one.
	relay *seatfeed.Relay
	// webhooks delivers webhook events to their endpoints.
	webhooks     *dispatch.Dispatcher
	writeTimeout time.Duration
	// metricsAddr, when set, is the operations listener's address
	// (metrics and profiles); the public one then does not serve metrics.
	metricsAddr string
	metrics     http.Handler
	// shutdown is closed when the server starts shutting down: open
	// seat-map streams end then, instead of holding the shutdown up.
	shutdown     chan struct{}
	shutdownOnce sync.Once
	// draining is set when a shutdown begins: /readyz then answers 503
	// for shutdownDelay while requests are still served.
	draining      atomic.Bool
	shutdownDelay time.Duration
	noJobs        bool
	closers       []func() // in the order they must run
	// traces is flushed after every closer.
	traces tracing.Tracing
}

// New connects to PostgreSQL and the lock store, applies pending migrations
// and builds the HTTP handler and the periodic jobs. Close releases what it
// opened; on error New has released it already.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger, opts ...Option) (_ *App, err error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	a := &App{log: logger, writeTimeout: cfg.LockMaxWait + workTimeout + writeSlack, metricsAddr: cfg.MetricsAddr,
		shutdown: make(chan struct{}), noJobs: o.noJobs, shutdownDelay: cfg.ShutdownDelay}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	verifier, err := auth.NewVerifier([]byte(cfg.AuthSecret))
	if err != nil {
		return nil, err
	}
	traces, err := tracing.Open(ctx, cfg.Tracing, o.tracerProvider)
	if err != nil {
		return nil, err
	}
	a.traces = traces
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, traces.PoolOptions()...)
	if err != nil {
		return nil, err
	}
	a.closeLast(pool.Close)
	if err := postgres.AwaitPrimary(ctx, pool, postgres.DefaultStartupWait); err != nil {
		return nil, err
	}
	if err := postgres.Migrate(pool); err != nil {
		return nil, err
	}
	// Every change writes its webhook event in its own transaction; a
	// hold's data labels its seats from the use cases' schedule cache
	// (bookings, built on the store below).
	var bookings *reservation.Service
	events := httpapi.NewEventData(func(ctx context.Context, id int64) (reservation.Schedule, error) {
		return bookings.Schedule(ctx, id)
	})
	store := postgres.NewStore(pool, append(traces.StoreOptions(), postgres.WithGroupWriters(cfg.BatchLanes),
		postgres.WithEvents(events))...)

	locks, err := openLockBackend(cfg, pool)
	if err != nil {
		return nil, err
	}
	a.closeFirst(locks.close)
	if locks.redis != nil {
		if err := traces.Redis(locks.redis); err != nil {
			return nil, err
		}
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The service's metrics are all named seatlock_..., the lock's too.
	observer, err := lockmetrics.New(registry, cfg.LockBackend, lockmetrics.Namespace("seatlock"))
	if err != nil {
		return nil, err
	}
	requests, err := opsmetrics.NewRequests(registry)
	if err != nil {
		return nil, err
	}
	if err := opsmetrics.RegisterPostgresPool(registry, pool); err != nil {
		return nil, err
	}
	if locks.redis != nil {
		if err := opsmetrics.RegisterRedisPool(registry, "locks", locks.redis); err != nil {
			return nil, err
		}
	}
	a.metrics = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
	publicMetrics := a.metrics
	if a.metricsAddr != "" {
		publicMetrics = nil
	}
	locker := lock.New(locks.backend, lock.Config{
		MaxWait: cfg.LockMaxWait, Logger: logger, Observer: observer,
		// A booked seat's seal is remembered for lock.SealMemory: the
		// hammered seat costs Redis one call per instance per SealMemory.
		RememberSeals: cfg.FastPath,
	})
	// Before the backend closes: background releases still need it.
	a.closeFirst(locker.Close)

	keys := postgres.NewIdempotencyStore(pool)
	feed, err := a.openFeed(cfg, logger, registry, traces)
	if err != nil {
		return nil, err
	}
	userLimiter, addressLimiter, err := a.openLimiters(cfg, registry, traces)
	if err != nil {
		return nil, err
	}
	var streamFeed seatstream.Feed
	if feed != nil {
		streamFeed = feed
	}
	// The use cases publish nothing themselves: every seat change is
	// written to the seat_changes outbox in its own transaction, and the
	// relay streams it from there.
	bound, err := a.openRelay(ctx, cfg, pool, locks.backend, feed, registry, logger, o.jobNamespace)
	if err != nil {
		return nil, err
	}
	var repo reservation.Repository = store
	if o.wrapStore != nil {
		repo = o.wrapStore(store)
	}
	// The seat map and best available read images kept by the seat feed
	// (listed from PostgreSQL without one: no REDIS_URL).
	images := seatmap.NewImages(feed, store, seatmap.Config{Logger: logger, MaxBytes: int64(cfg.SeatImagesMaxMiB) << 20})
	a.closeFirst(images.Close)
	bookings = reservation.NewService(repo, traces.Locker(locker), reservation.Config{LockTTL: cfg.LockTTL, SealBooked: cfg.FastPath,
		HoldTTL: cfg.HoldTTL, MaxHoldsPerUser: cfg.MaxHoldsPerUser, HoldMaxLifetime: cfg.HoldMaxLifetime,
		WriteTimeout: cmp.Or(o.writeTimeout, postgres.WriteTimeout(pool)), SeatImages: images}, logger)
	// A configuration built without config.Load (tests) has no retention:
	// zero would purge every finished delivery at once.
	webhookLog := &webhookRetention{log: postgres.NewWebhookDeliveries(pool), keep: cmp.Or(cfg.WebhookRetention, webhook.DefaultRetention)}
	if a.jobs, err = newJobs(locker, store, keys, bookings, locks.pruner, bound, webhookLog, logger, o.jobNamespace); err != nil {
		return nil, err
	}
	room, roomChecks, err := a.openRoom(cfg, registry, traces, logger, o.jobNamespace)
	if err != nil {
		return nil, err
	}
	webhooks, err := openWebhooks(cfg, pool)
	if err != nil {
		return nil, err
	}
	if err := a.openDispatcher(ctx, cfg, webhooks, registry, logger); err != nil {
		return nil, err
	}
	a.handler = httpapi.NewHandler(httpapi.Options{
		Bookings:    bookings,
		SeatImages:  images,
		Checkout:    bookings,
		Idempotency: keys,
		Verifier:    verifier,
		Logger:      logger,
		AccessLog:   o.accessLog,
		MaxWait:     cfg.LockMaxWait,
		Metrics:     publicMetrics,
		// A waiting request still gets its full work budget.
		RequestTimeout: cfg.LockMaxWait + workTimeout,
		Checks: slices.Concat([]httpapi.Check{{Name: "postgres", Ping: store.Ping}, {Name: "instance", Ping: a.notDraining}},
			locks.checks, roomChecks),
		Feed:           streamFeed,
		MaxStreams:     cfg.MaxStreams,
		Shutdown:       a.shutdown,
		Observer:       requests,
		UserLimiter:    userLimiter,
		AddressLimiter: addressLimiter,
		TrustedProxies: cfg.TrustedProxies,
		Room:           room,
		Webhooks:       webhooks,
		WebhookConfig:  cfg.Webhook(),
		Routed:         traces.Routed(),
	})
	a.handler = traces.Handler(a.handler)
	return a, nil
}

// openRoom opens the waiting room on Redis connections of its own and
// starts its rounds of admission; without REDIS_URL there is none (nil).
// Deployments sharing a Redis (tests) keep their queues apart by
// namespace, as their jobs. Its readiness check pings those connections:
// every hold and booking asks the room whether its schedule is queued, so
// an instance whose room cannot reach Redis (its pool still failing fast
// on the dials of an outage, while the lock's connections are back) is
// not ready.
func (a *App) openRoom(cfg config.Config, registry prometheus.Registerer, traces tracing.Tracing, logger *slog.Logger, namespace string) (httpapi.WaitingRoom, []httpapi.Check, error) {
	if cfg.RedisURL == "" {
		return nil, nil, nil
	}
	client, err := redisconn.Open(cfg.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	a.closeFirst(func() { _ = client.Close() })
	if err := errors.Join(opsmetrics.RegisterRedisPool(registry, "queue", client), traces.Redis(client)); err != nil {
		return nil, nil, err
	}
	metrics, err := opsmetrics.NewQueue(registry)
	if err != nil {
		return nil, nil, err
	}
	store := redisroom.New(client, redisroom.Config{Namespace: namespace, Replicas: cfg.SeatFeedReplicas, Logger: logger})
	room := waitroom.NewRoom(store, waitroom.NewAdmissions([]byte(cfg.AuthSecret)), waitroom.Config{Logger: logger, Observer: metrics})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		room.Run(ctx)
	}()
	a.closeFirst(func() {
		stop()
		<-done
	})
	return room, []httpapi.Check{{Name: "queue", Ping: func(ctx context.Context) error { return client.Ping(ctx).Err() }}}, nil
}

// feedSpareConns are the feed's connections beyond its readers': the
// relay's appends and the streams' look-ups.
const feedSpareConns = 16

// feedBufferSize is the read and write buffer of each of the feed's
// connections. On a Redis Cluster most of them wait in a blocking read
// for one schedule's changes (every seat map an instance keeps follows its
// schedule's stream), and a read's reply, at most 512 changes a stream,
// takes a few fills of it; go-redis's 64 KiB a connection would be
// megabytes for nothing.
const feedBufferSize = 4 << 10

// openFeed opens the live seat map's feed on its own Redis connections (a
// blocking stream read holds a connection; the locks must not wait for
// one). Without REDIS_URL (LOCK_BACKEND=postgres) there is no feed.
func (a *App) openFeed(cfg config.Config, logger *slog.Logger, registry prometheus.Registerer, traces tracing.Tracing) (*seatfeed.Feed, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	// One blocking read follows every watched schedule, except on a Redis
	// Cluster, where each schedule's stream is read alone and holds a
	// connection: there the pool must have one for every schedule an
	// instance's streams may watch (at most MAX_STREAMS), and some for the
	// appends, or the readers past the pool's size wait and their streams
	// stall. The pool opens connections only when they are needed.
	client, err := redisconn.Open(cfg.RedisURL, redisconn.WithMinPoolSize(cmp.Or(cfg.MaxStreams, seatstream.DefaultMaxStreams)+feedSpareConns),
		redisconn.WithBufferSize(feedBufferSize))
	if err != nil {
		return nil, err
	}
	if err := errors.Join(opsmetrics.RegisterRedisPool(registry, "feed", client), traces.Redis(client)); err != nil {
		_ = client.Close()
		return nil, err
	}
	feed := seatfeed.New(client, seatfeed.Config{Logger: logger, BatchLanes: feedLanes(cfg), Replicas: cfg.SeatFeedReplicas})
	a.closeFirst(func() {
		feed.Close()
		_ = client.Close()
	})
	return feed, nil
}

// openLimiters opens the rate limits RATE_LIMIT_USER and RATE_LIMIT_IP on
// Redis connections of their own; without REDIS_URL there are none.
func (a *App) openLimiters(cfg config.Config, registry prometheus.Registerer, traces tracing.Tracing) (user, address httpapi.Limiter, err error) {
	if cfg.RedisURL == "" || cfg.RateLimitUser == 0 && cfg.RateLimitIP == 0 {
		return nil, nil, nil
	}
	client, err := redisconn.Open(cfg.RedisURL)
	if err != nil {
		return nil, nil, err
	}
	a.closeFirst(func() { _ = client.Close() })
	if err := errors.Join(opsmetrics.RegisterRedisPool(registry, "ratelimit", client), traces.Redis(client)); err != nil {
		return nil, nil, err
	}
	// Each limiter leaves the instances' registry when the app closes, so
	// the others take over its share at once. They leave together: with
	// Redis down, each waits its timeout.
	var limiters []*ratelimit.Limiter
	if cfg.RateLimitUser > 0 {
		l := ratelimit.New(client, "ratelimit:user", cfg.RateLimitUser)
		limiters = append(limiters, l)
		user = l
	}
	if cfg.RateLimitIP > 0 {
		l := ratelimit.New(client, "ratelimit:ip", cfg.RateLimitIP)
		limiters = append(limiters, l)
		address = l
	}
	a.closeFirst(func() {
		var wg sync.WaitGroup
		for _, l := range limiters {
			wg.Go(func() { _ = l.Close() })
		}
		wg.Wait()
	})
	return user, address, nil
}

// Option tunes New.
type Option func(*options)

type options struct {
	noJobs       bool
	jobNamespace string
	accessLog    io.Writer
	wrapStore    func(reservation.Repository) reservation.Repository
	// tracerProvider, when set, turns tracing on with it.
	tracerProvider trace.TracerProvider
	// writeTimeout, when set, bounds writes under seat locks instead of
	// postgres.WriteTimeout's choice.
	writeTimeout time.Duration
}

// WithAccessLog writes the request log to w directly, as JSON lines in the
// format of slog's JSONHandler, instead of through the logger: cheaper at a
// line per request. For a logger writing JSON to the same w.
func WithAccessLog(w io.Writer) Option { return func(o *options) { o.accessLog = w } }

// WithJobNamespace separates this deployment's periodic jobs from those of
// others that share its lock store (each deployment's jobs then run once
// per period for it): the jobs clean one database, and every deployment
// has its own. Its waiting rooms' queues are kept apart the same way. Tests, which give every test a database of its own, use it.
func WithJobNamespace(ns string) Option { return func(o *options) { o.jobNamespace = ns } }

// WithoutJobs serves without running the periodic jobs (nor the seat change
// relay, which runs under a job lock too, nor the delivery of webhooks) on this instance
// (other instances run them: each job runs on one instance per period
// anyway). Tests use it to see the service without its clean-ups.
func WithoutJobs() Option { return func(o *options) { o.noJobs = true } }

// WithStoreWrapper puts wrap's Repository between the use cases and the
// PostgreSQL store. Tests use it to stop an instance at a chosen point of
// a write, such as right after a COMMIT.
func WithStoreWrapper(wrap func(reservation.Repository) reservation.Repository) Option {
	return func(o *options) { o.wrapStore = wrap }
}

// WithTracerProvider turns tracing on with tp, whatever the OTEL_*
// variables say (cfg.Tracing): every request then makes a trace (see the
// docs/operations.md, Traces). Tests use it with an in-memory exporter.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}

// WithWriteTimeout bounds each write under seat locks by d, instead of the
// bound that suits the database URL (postgres.WriteTimeout). Tests that
// prove what concurrent requests are answered use a wide one: on a machine
// whose disk other tests' databases share, a commit can stall past the
// production bound, and the answer would be a correct 503 that says
// nothing of the race under test.
func WithWriteTimeout(d time.Duration) Option { return func(o *options) { o.writeTimeout = d } }

// closeFirst registers f to run before everything registered so far (a
// lock backend closes before the pool it uses).
func (a *App) closeFirst(f func()) { a.closers = append([]func(){f}, a.closers...) }

// closeLast registers f to run after everything registered so far.
func (a *App) closeLast(f func()) { a.closers = append(a.closers, f) }

// Handler is the service's HTTP API.
func (a *App) Handler() http.Handler { return a.handler }

// Close releases the connections to the lock store and PostgreSQL.
func (a *App) Close() {
	for _, f := range a.closers {
		f()
	}
	a.closers = nil
	a.traces.Flush()
	a.traces = tracing.Tracing{}
}

var errNoBackend = errors.New(`app: LOCK_BACKEND must be "redis" or "postgres"`)

// errDraining fails the readiness check of an instance shutting down.
var errDraining = errors.New("app: draining: shutting down")

// notDraining is the readiness check of the instance itself.
func (a *App) notDraining(context.Context) error {
	if a.draining.Load() {
		return errDraining
	}
	return nil
}
