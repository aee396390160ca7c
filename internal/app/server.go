package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
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
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// Serve answers requests on ln and runs the periodic jobs until ctx is done,
// then stops accepting, drains in-flight requests (as long as the longest
// request may take) and waits for running jobs. It returns nil after a clean
// shutdown.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := a.NewServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if a.debugAddr != "" {
		debugCtx, stopDebug := context.WithCancel(context.WithoutCancel(ctx))
		debugDone := a.serveDebug(debugCtx, a.debugAddr)
		defer func() { stopDebug(); <-debugDone }()
	}
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	jobsDone := make(chan error, 1)
	if a.noJobs {
		jobsDone <- nil
	} else {
		go func() { jobsDone <- a.jobs.Run(jobsCtx) }()
	}
	a.log.Info("serving", slog.String("addr", ln.Addr().String()))

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	stopJobs()
	jobsErr := <-jobsDone
	if serveErr != nil {
		return fmt.Errorf("app: serve: %w", serveErr)
	}
	a.log.Info("shutting down: draining in-flight requests")
	a.shutdownOnce.Do(func() { close(a.shutdown) })
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.writeTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("app: shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("app: serve: %w", err)
	}
	if jobsErr != nil {
		return fmt.Errorf("app: jobs: %w", jobsErr)
	}
	return nil
}
