// Package app wires the adapters to the use cases and runs the HTTP server:
// the only place that knows every concrete type.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockmetrics"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/postgres"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Server timeouts. A request may wait LOCK_MAX_WAIT for a seat and then
// needs time for its own work (workTimeout); WriteTimeout leaves room for
// that whole request to write its answer.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	workTimeout       = 10 * time.Second
	writeSlack        = 10 * time.Second
	idleTimeout       = 120 * time.Second
)

// App is one running instance of the service.
type App struct {
	log     *slog.Logger
	redis   *redis.Client
	pool    *pgxpool.Pool
	handler http.Handler

	lockBackend  *redislock.Backend
	writeTimeout time.Duration
}

// New connects to Redis and PostgreSQL, applies pending migrations and builds
// the HTTP handler. Close releases what it opened.
func New(ctx context.Context, cfg config.Config, logger *slog.Logger) (*App, error) {
	verifier, err := auth.NewVerifier([]byte(cfg.AuthSecret))
	if err != nil {
		return nil, err
	}
	redisClient, err := openRedis(cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		_ = redisClient.Close()
		return nil, err
	}
	if err := postgres.Migrate(pool); err != nil {
		pool.Close()
		_ = redisClient.Close()
		return nil, err
	}

	store := postgres.NewStore(pool)
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	observer, err := lockmetrics.New(registry, cfg.LockBackend)
	if err != nil {
		pool.Close()
		_ = redisClient.Close()
		return nil, err
	}
	lockBackend := redislock.New(redisClient)
	locker := lock.New(lockBackend, lock.Config{MaxWait: cfg.LockMaxWait, Logger: logger, Observer: observer})
	bookings := reservation.NewService(store, locker, reservation.Config{LockTTL: cfg.LockTTL}, logger)
	handler := httpapi.NewHandler(httpapi.Options{
		Bookings: bookings,
		Verifier: verifier,
		Logger:   logger,
		MaxWait:  cfg.LockMaxWait,
		Metrics:  promhttp.HandlerFor(registry, promhttp.HandlerOpts{}),
		// A waiting request still gets its full work budget.
		RequestTimeout: cfg.LockMaxWait + workTimeout,
		Checks: []httpapi.Check{
			{Name: "redis", Ping: func(ctx context.Context) error { return redisClient.Ping(ctx).Err() }},
			{Name: "postgres", Ping: store.Ping},
		},
	})
	return &App{log: logger, redis: redisClient, pool: pool, lockBackend: lockBackend, handler: handler,
		writeTimeout: cfg.LockMaxWait + workTimeout + writeSlack}, nil
}

// openRedis builds a client whose every call is bounded: the context's
// deadline applies to socket reads and writes.
func openRedis(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("app: parse REDIS_URL: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout = 2 * time.Second
	opts.ReadTimeout = time.Second
	opts.WriteTimeout = time.Second
	return redis.NewClient(opts), nil
}

// Handler is the service's HTTP API.
func (a *App) Handler() http.Handler { return a.handler }

// NewServer returns an http.Server for the handler with every timeout set.
func (a *App) NewServer() *http.Server {
	return &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      a.writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// Serve answers requests on ln until ctx is done, then stops accepting and
// drains in-flight requests (up to shutdownTimeout). It returns nil after a
// clean shutdown.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := a.NewServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	a.log.Info("serving", slog.String("addr", ln.Addr().String()))

	select {
	case err := <-errc:
		return fmt.Errorf("app: serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down: draining in-flight requests")
	// Drain as long as the longest request may take.
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.writeTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("app: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("app: serve: %w", err)
	}
	return nil
}

// Close releases the connections to Redis and PostgreSQL.
func (a *App) Close() {
	_ = a.lockBackend.Close()
	a.pool.Close()
	_ = a.redis.Close()
}
