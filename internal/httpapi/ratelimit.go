package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// Limiter admits requests per key at a rate shared by every instance.
type Limiter interface {
	// Allow takes one request's place for key; when it is refused,
	// retryAfter says when the next is admitted. An error means the limiter
	// could not say.
	Allow(ctx context.Context, key string) (allowed bool, retryAfter time.Duration, err error)
}

var errRateLimited = problem.Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Title: "Too many requests",
	Detail: "This client has made more requests than it may; retry after the time in Retry-After."}

// Names of the limits, in metrics.
const (
	limitUser    = "user"
	limitAddress = "ip"
)

// limitErrorsEvery is the least time between two logged limiter failures:
// with Redis away, every request would log one.
const limitErrorsEvery = 10 * time.Second

// admit refuses requests past limiter's rate for key(r) with 429
// rate_limited and Retry-After. When the limiter cannot say (Redis away),
// the request is admitted: a limit must not take the service down with
// it. Nil limiter: no limit.
func (h *handler) admit(name string, limiter Limiter, key func(*http.Request) string) func(http.Handler) http.Handler {
	var lastLogged atomic.Int64
	return func(next http.Handler) http.Handler {
		if limiter == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			allowed, wait, err := limiter.Allow(r.Context(), key(r))
			switch {
			case err != nil:
				now := time.Now().UnixNano()
				if last := lastLogged.Load(); now-last > int64(limitErrorsEvery) && lastLogged.CompareAndSwap(last, now) {
					h.log.WarnContext(r.Context(), "rate limit unknown; admitting requests", slog.String("limit", name), slog.Any("error", err))
				}
			case !allowed:
				h.observer.RateLimited(name)
				e := errRateLimited
				e.RetryAfter = problem.AtLeastASecond(wait)
				problem.Write(w, r, &e)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// userKey is the authenticated user; admit by user runs after authenticate.
func userKey(r *http.Request) string { return principalFrom(r.Context()).UserID }

// addressKey is the client's address without its port. Behind a proxy it
// is the proxy's: such a deployment sets RATE_LIMIT_IP to 0 and limits at
// the proxy.
func addressKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
