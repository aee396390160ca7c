// Package ratelimit admits requests per key (a user, a client address) at
// a steady rate shared by every instance: the generic cell rate algorithm
// of github.com/go-redis/redis_rate, one Lua call per request on one Redis
// key, so instances need no coordination of their own and a limit holds
// however many of them serve.
package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limiter admits PerSecond requests a second per key, with bursts of as
// many.
type Limiter struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
}

// New returns a limiter named name (its keys are apart from other
// limiters') on client.
func New(client redis.UniversalClient, name string, perSecond int) *Limiter {
	return &Limiter{
		limiter: redis_rate.NewLimiter(client),
		limit:   redis_rate.PerSecond(perSecond),
		prefix:  "seatlock:" + name + ":",
	}
}

// Allow takes one request's place for key. When it is refused, retryAfter
// is when the next one will be admitted. An error means Redis could not
// say; the caller decides whether to admit.
func (l *Limiter) Allow(ctx context.Context, key string) (allowed bool, retryAfter time.Duration, err error) {
	res, err := l.limiter.Allow(ctx, l.prefix+key, l.limit)
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: %w", err)
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, res.RetryAfter, nil
}
