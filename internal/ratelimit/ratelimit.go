// Package ratelimit admits requests per key (a user, a client address) at
// a steady rate shared by every instance: the generic cell rate algorithm
// of github.com/go-redis/redis_rate on one Redis key per client, so
// instances need no coordination of their own and a limit holds however
// many of them serve.
//
// Asking Redis for every request would cost the busiest requests (a
// refusal of a taken seat, answered from memory) a round trip of their
// own. So an instance takes up to a twentieth of a second's budget at once
// and spends it locally within leaseLife: a client over its limit is
// refused at the same rate, and one within it costs Redis a call per
// batch. The price is precision: a limit may admit up to one batch more per
// instance, and a batch an instance does not spend in time is lost to the
// client for that moment.
package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// leaseLife is how long an instance may spend a batch it took.
const leaseLife = 250 * time.Millisecond

// Limiter admits PerSecond requests a second per key, with bursts of as
// many.
type Limiter struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
	batch   int

	mu      sync.Mutex
	leases  map[string]*lease
	sweepAt time.Time
}

// lease is what is left of a batch taken for one key, or, with left 0,
// a refusal that stands until until: Redis said when the next place
// comes, so the requests before it are refused here.
type lease struct {
	left  int
	until time.Time
}

// New returns a limiter named name (its keys are apart from other
// limiters') on client.
func New(client redis.UniversalClient, name string, perSecond int) *Limiter {
	return &Limiter{
		limiter: redis_rate.NewLimiter(client),
		limit:   redis_rate.PerSecond(perSecond),
		prefix:  "seatlock:" + name + ":",
		batch:   max(1, perSecond/20),
		leases:  map[string]*lease{},
	}
}

// Allow takes one request's place for key. When it is refused, retryAfter
// is when the next one will be admitted. An error means Redis could not
// say; the caller decides whether to admit.
func (l *Limiter) Allow(ctx context.Context, key string) (allowed bool, retryAfter time.Duration, err error) {
	if allowed, retryAfter, known := l.local(key); known {
		return allowed, retryAfter, nil
	}
	res, err := l.limiter.AllowAtMost(ctx, l.prefix+key, l.limit, l.batch)
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: %w", err)
	}
	switch {
	case res.Allowed == 0:
		l.keep(key, 0, res.RetryAfter)
		return false, res.RetryAfter, nil
	case res.Allowed > 1:
		l.keep(key, res.Allowed-1, leaseLife)
	}
	return true, 0, nil
}

// local answers from key's live lease or refusal, if it has one.
func (l *Limiter) local(key string) (allowed bool, retryAfter time.Duration, known bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	le := l.leases[key]
	switch {
	case le == nil || !now.Before(le.until):
		return false, 0, false
	case le.left == 0:
		return false, le.until.Sub(now), true
	}
	le.left--
	if le.left == 0 {
		delete(l.leases, key) // spent: the next request asks Redis
	}
	return true, 0, true
}

// keep records, for d, left places leased for key (a refusal when 0), and
// forgets the leases that ran out.
func (l *Limiter) keep(key string, left int, d time.Duration) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leases[key] = &lease{left: left, until: now.Add(d)}
	if now.After(l.sweepAt) {
		for k, le := range l.leases {
			if now.After(le.until) {
				delete(l.leases, k)
			}
		}
		l.sweepAt = now.Add(time.Second)
	}
}
