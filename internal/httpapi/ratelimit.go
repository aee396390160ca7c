package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// addressKey returns the key of the per-address limit: the client's
// address (clientAddress).
func addressKey(trusted []netip.Prefix) func(*http.Request) string {
	return func(r *http.Request) string { return clientAddress(r, trusted) }
}

// clientAddress is the address of the client that sent r: the peer's,
// without its port; when the peer is a trusted proxy (TRUSTED_PROXIES),
// the address it was given the request by, as X-Forwarded-For says: read
// from its end (what the nearest proxy added) back, the first address no
// trusted proxy has. What an untrusted peer writes in X-Forwarded-For is
// never read, and what a client writes there before the trusted proxies'
// entries is never reached: a client cannot choose its own key. An entry
// that is not an address ends the walk at the last address read.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !isTrusted(addr, trusted) {
		return host
	}
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop, ok := parseHop(hops[j])
			if !ok {
				return addr.String()
			}
			addr = hop
			if !isTrusted(addr, trusted) {
				return addr.String()
			}
		}
	}
	return addr.String()
}

// parseHop reads one X-Forwarded-For entry: an address, bracketed or with
// a port as some proxies write it.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

func isTrusted(addr netip.Addr, trusted []netip.Prefix) bool {
	addr = addr.Unmap()
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
