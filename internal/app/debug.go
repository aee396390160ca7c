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
// It is served only on DEBUG_ADDR, a listener of its own, never on the
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

// serveDebug serves DebugHandler on addr until ctx ends. A listener that
// cannot be opened is logged, not fatal: profiling is optional.
func (a *App) serveDebug(ctx context.Context, addr string) (done <-chan struct{}) {
	stopped := make(chan struct{})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		a.log.Error("debug listener", slog.String("addr", addr), slog.Any("error", err))
		close(stopped)
		return stopped
	}
	srv := &http.Server{Handler: DebugHandler(), ReadHeaderTimeout: readHeaderTimeout}
	a.log.Info("serving profiles", slog.String("addr", ln.Addr().String()))
	go func() {
		defer close(stopped)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("debug listener", slog.Any("error", err))
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
