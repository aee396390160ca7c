package lock

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// lease is the Client's Lease. Its context ends when the lease does; a fixed
// TTL lease ends by a timer at its local expiry, a watchdog lease when an
// extension finds the key gone (or none succeeded for a whole TTL).
type lease struct {
	client *Client
	key    string
	token  string
	fence  int64
	ttl    time.Duration
	since  time.Time

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	expiry   *time.Timer   // fixed TTL only
	stop     chan struct{} // closes the watchdog
	stopped  chan struct{} // closed when the watchdog has returned
	released bool
}

func newLease(parent context.Context, c *Client, key, token string, fence int64, ttl time.Duration, since time.Time) *lease {
	ctx, cancel := context.WithCancelCause(parent)
	return &lease{client: c, key: key, token: token, fence: fence, ttl: ttl, since: since, ctx: ctx, cancel: cancel}
}

// start arms the expiry timer, or the watchdog.
func (l *lease) start(watchdog bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if watchdog {
		l.stop, l.stopped = make(chan struct{}), make(chan struct{})
		go l.watch()
		return
	}
	l.expiry = time.AfterFunc(time.Until(l.since.Add(l.ttl)), l.lose)
}

func (l *lease) Key() string              { return l.key }
func (l *lease) Fence() int64             { return l.fence }
func (l *lease) Context() context.Context { return l.ctx }

// lose ends the lease's context because the lock is gone.
func (l *lease) lose() {
	if l.ctx.Err() == nil {
		l.client.observer.Lost()
	}
	l.cancel(ErrLeaseLost)
}

// Extend implements Lease.
func (l *lease) Extend(ctx context.Context, ttl time.Duration) error {
	if err := ValidateTTL(ttl); err != nil {
		return err
	}
	l.mu.Lock()
	released := l.released
	l.mu.Unlock()
	if released || context.Cause(l.ctx) == ErrLeaseLost {
		return ErrNotHeld
	}
	requested := time.Now()
	ok, err := l.client.backend.Extend(ctx, l.key, l.token, ttl)
	l.client.observer.Extended(err == nil && ok)
	if err != nil {
		return err
	}
	if !ok {
		l.lose()
		return ErrNotHeld
	}
	l.mu.Lock()
	if l.expiry != nil {
		l.expiry.Reset(time.Until(requested.Add(ttl)))
	}
	l.mu.Unlock()
	return nil
}

// Release implements Lease.
func (l *lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return ErrNotHeld
	}
	l.released = true
	if l.expiry != nil {
		l.expiry.Stop()
	}
	stop, stopped := l.stop, l.stopped
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped // no extension may race the delete
	}

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.client.releaseTimeout)
	defer cancel()
	ok, err := l.client.backend.Release(ctx, l.key, l.token)
	l.cancel(ErrReleased)
	l.client.observer.Released(time.Since(l.since), err == nil && !ok)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNotHeld
	}
	return nil
}

// watch extends the lease every ttl/3 until Release. A key found gone or
// foreign ends the lease at once; store errors end it only when no extension
// has succeeded for a whole TTL, since by then the key has surely expired.
func (l *lease) watch() {
	defer close(l.stopped)
	interval := l.ttl / 3
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	lastOK := l.since
	for {
		select {
		case <-l.stop:
			return
		case <-ticker.C:
		}
		requested := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		ok, err := l.client.backend.Extend(ctx, l.key, l.token, l.ttl)
		cancel()
		l.client.observer.Extended(err == nil && ok)
		switch {
		case err != nil:
			l.client.log.Warn("lock watchdog: extension failed", slog.String("key", l.key), slog.Any("error", err))
			if time.Since(lastOK) >= l.ttl {
				l.lose()
				return
			}
		case !ok:
			l.client.log.Warn("lock watchdog: lock lost", slog.String("key", l.key))
			l.lose()
			return
		default:
			lastOK = requested
		}
	}
}
