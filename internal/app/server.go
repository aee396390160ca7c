package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi"
)

const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	idleTimeout       = 120 * time.Second
)

// NewServer returns an http.Server for the handler with every timeout set.
func (a *App) NewServer() *http.Server {
	return &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      a.writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    httpapi.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// Serve answers requests on ln and runs the periodic jobs and the seat
// change relay until ctx is done.
// Then, in this order, it stops accepting connections, ends the live seat
// map streams and drains in-flight requests (as long as the longest request
// may take), and only then stops the jobs and the relay and waits for them: a request
// still draining may rely on a job (expired holds are freed by one). It
// returns nil after a clean shutdown.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := a.NewServer()
	errc := make(chan error, 1)
	// Past MaxHeaderBytes, net/http answers on the connection itself; the
	// listener makes that answer a problem (see httpapi.ProblemListener).
	go func() { errc <- srv.Serve(httpapi.ProblemListener(ln)) }()
	if a.metricsAddr != "" {
		opsCtx, stopOps := context.WithCancel(context.WithoutCancel(ctx))
		opsDone := a.serveOps(opsCtx, a.metricsAddr)
		defer func() { stopOps(); <-opsDone }()
	}
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	jobsDone := make(chan error, 1)
	if a.noJobs {
		jobsDone <- nil
	} else {
		go func() { jobsDone <- a.jobs.Run(jobsCtx) }()
	}
	relayDone := a.runRelay(jobsCtx)
	webhooksDone := a.runDispatcher(jobsCtx)
	a.log.Info("serving", slog.String("addr", ln.Addr().String()))

	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("app: serve: %w", err)
	case <-ctx.Done():
		serveErr = a.drain(ctx, srv, errc)
	}
	a.log.Info("shutting down: stopping jobs")
	stopJobs()
	jobsErr := <-jobsDone
	<-relayDone
	<-webhooksDone
	if serveErr != nil {
		return serveErr
	}
	if jobsErr != nil {
		return fmt.Errorf("app: jobs: %w", jobsErr)
	}
	return nil
}

// drain stops accepting connections, ends the streams and waits for the
// requests in flight.
func (a *App) drain(ctx context.Context, srv *http.Server, served <-chan error) error {
	a.draining.Store(true)
	if a.shutdownDelay > 0 {
		// Still serving, but not ready: the load balancer's health checks
		// take the instance out of rotation before its port closes.
		a.log.Info("shutting down: not ready; serving for SHUTDOWN_DELAY more", slog.Duration("delay", a.shutdownDelay))
		time.Sleep(a.shutdownDelay)
	}
	a.log.Info("shutting down: no new connections; draining in-flight requests")
	a.shutdownOnce.Do(func() { close(a.shutdown) })
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.writeTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("app: shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("app: serve: %w", err)
	}
	a.log.Info("shutting down: requests drained")
	return nil
}
