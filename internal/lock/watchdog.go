package lock

import (
	"context"
	"log/slog"
	"time"
)

// watch extends the lease every ttl/3 until it is released or lost. A
// failed extension is retried at once with a short backoff, within the time
// the lease has left, so that a couple of transient errors do not cost a
// healthy lease; the local expiry ends the lease if none succeeds in time.
func (l *lease) watch() {
	defer close(l.stopped)
	interval := l.ttl / 3
	next := time.NewTimer(time.Until(l.since.Add(interval)))
	defer next.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.ctx.Done():
			return
		case <-next.C:
		}
		if !l.extendWithRetry(interval) {
			return
		}
		l.mu.Lock()
		renewAt := l.expiresAt.Add(-l.ttl + interval) // interval after the last success began
		l.mu.Unlock()
		next.Reset(time.Until(renewAt))
	}
}

// extendWithRetry extends the lease, retrying failures with backoff until
// the lease's local expiry. It reports whether the lease is still held.
func (l *lease) extendWithRetry(interval time.Duration) bool {
	backoff := max(interval/16, time.Millisecond)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		err := l.extendOnce(ctx, l.ttl)
		cancel()
		if err == nil {
			return true
		}
		if released, lost := l.state(); released || lost {
			if lost {
				l.client.log.Warn("lock watchdog: lock lost", slog.String("key", l.target.name()), slog.Any("error", err))
			}
			return false
		}
		l.client.log.Warn("lock watchdog: extension failed, retrying", slog.String("key", l.target.name()), slog.Any("error", err))
		select {
		case <-l.stop:
			return false
		case <-l.ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, interval/2)
	}
}
