// Package redislock is the Redis adapter of the lock port (lock.Locker).
//
// A lock is one Redis string key whose value is the holder's random token,
// written with SET NX PX so that it expires on its own. Release is an
// owner-checked compare-and-delete in Lua, so a holder whose lease expired
// can never delete a successor's lock. Keys that share a hash tag
// ("lock:{schedule:7}:seat:3") live in one Redis Cluster slot, which is what
// later multi-key scripts need.
package redislock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
)

// DefaultReleaseTimeout bounds a release that runs after the caller's context
// was cancelled.
const DefaultReleaseTimeout = 2 * time.Second

var (
	//go:embed acquire.lua
	acquireSource string
	//go:embed release.lua
	releaseSource string

	acquireScript = redis.NewScript(acquireSource)
	releaseScript = redis.NewScript(releaseSource)
)

// Options tune a Locker. The zero value (or nil) uses the defaults.
type Options struct {
	// ReleaseTimeout bounds each Release, independent of the caller's
	// context. Default DefaultReleaseTimeout.
	ReleaseTimeout time.Duration
}

// Locker takes locks in one Redis deployment (standalone or cluster: any
// client that runs scripts).
type Locker struct {
	client         redis.Scripter
	releaseTimeout time.Duration
}

var _ lock.Locker = (*Locker)(nil)

// New returns a Locker that uses client. The client should have
// ContextTimeoutEnabled so that context deadlines bound every call.
func New(client redis.Scripter, opts *Options) *Locker {
	l := &Locker{client: client, releaseTimeout: DefaultReleaseTimeout}
	if opts != nil && opts.ReleaseTimeout > 0 {
		l.releaseTimeout = opts.ReleaseTimeout
	}
	return l
}

// Acquire implements lock.Locker in one round trip: SET NX PX, and on
// conflict the holder's PTTL from the same script.
func (l *Locker) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	if err := lock.ValidateTTL(ttl); err != nil {
		return nil, err
	}
	token := lock.NewToken()
	reply, err := acquireScript.Run(ctx, l.client, []string{key}, token, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return nil, classify("acquire", err)
	}
	if len(reply) != 2 {
		return nil, fmt.Errorf("redislock: acquire: unexpected reply %v", reply)
	}
	if reply[0] != 1 {
		// A PTTL of -1 means a key without expiry (set by hand); report
		// "unknown" rather than a negative duration.
		remaining := time.Duration(max(reply[1], 0)) * time.Millisecond
		return nil, &lock.HeldError{Key: key, Remaining: remaining}
	}
	return &lease{locker: l, key: key, token: token}, nil
}

type lease struct {
	locker *Locker
	key    string
	token  string
}

func (s *lease) Key() string { return s.key }

// Release implements lock.Lease.
func (s *lease) Release(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.locker.releaseTimeout)
	defer cancel()
	deleted, err := releaseScript.Run(ctx, s.locker.client, []string{s.key}, s.token).Int64()
	if err != nil {
		return classify("release", err)
	}
	if deleted == 0 {
		return lock.ErrNotHeld
	}
	return nil
}

// classify wraps transport failures and "server cannot serve now" replies
// with lock.ErrUnavailable; other server replies stay plain errors.
func classify(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("redislock: %s: %w", op, err)
	}
	var reply redis.Error
	if errors.As(err, &reply) && !redis.HasErrorPrefix(err, "LOADING") &&
		!redis.HasErrorPrefix(err, "READONLY") && !redis.HasErrorPrefix(err, "CLUSTERDOWN") &&
		!redis.HasErrorPrefix(err, "TRYAGAIN") && !redis.HasErrorPrefix(err, "MASTERDOWN") {
		return fmt.Errorf("redislock: %s: %w", op, err)
	}
	return fmt.Errorf("redislock: %s: %w: %w", op, lock.ErrUnavailable, err)
}
