package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// DebugHandler serves the Go profiler (net/http/pprof) under /debug/pprof/.
// It is served only on METRICS_ADDR, a listener of its own, never on the
// public one: profiles reveal internals, and a CPU profile costs the
// instance while it runs.
func DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// opsHandler is what METRICS_ADDR serves: the metrics and the profiles.
func opsHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.Handle("/debug/pprof/", DebugHandler())
	return mux
}

// serveOps serves opsHandler on addr until ctx ends. A listener that cannot
// be opened is logged, not fatal: the service itself still works.
func (a *App) serveOps(ctx context.Context, addr string) (done <-chan struct{}) {
	stopped := make(chan struct{})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		a.log.Error("metrics listener", slog.String("addr", addr), slog.Any("error", err))
		close(stopped)
		return stopped
	}
	srv := &http.Server{Handler: opsHandler(a.metrics), ReadHeaderTimeout: readHeaderTimeout}
	a.log.Info("serving metrics and profiles", slog.String("addr", ln.Addr().String()))
	go func() {
		defer close(stopped)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics listener", slog.Any("error", err))
		}
	}()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	return stopped
}
