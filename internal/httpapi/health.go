package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// readyTimeout bounds each readiness probe.
const readyTimeout = time.Second

func (h *handler) healthz(w http.ResponseWriter, r *http.Request) error {
	return ok(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz pings every dependency at once; any failure is 503 with
// Retry-After and the names (never the errors) of what failed.
func (h *handler) readyz(w http.ResponseWriter, r *http.Request) error {
	results := make(map[string]string, len(h.checks))
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed bool
	)
	for _, c := range h.checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
			defer cancel()
			err := c.Ping(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = true
				results[c.Name] = "unavailable"
				h.log.WarnContext(r.Context(), "readiness check failed", slog.String("check", c.Name), slog.Any("error", err))
				return
			}
			results[c.Name] = "ok"
		})
	}
	wg.Wait()
	if failed {
		e := *problem.Unavailable
		e.Checks = results
		return &e
	}
	return ok(w, http.StatusOK, map[string]any{"status": "ready", "checks": results})
}
