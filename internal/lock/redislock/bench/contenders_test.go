// Package bench compares the Redis adapter of the lock port with the raw
// go-redis floor and with two well-known Go Redis lock libraries, on the
// same Redis and the same go-redis client, and its own batching with
// go-redis's auto-pipelining. `make bench` runs interleaved rounds (see
// table_test.go) and hands them to benchstat; `go test` checks that every
// contender really locks, so that the figures compare locks, not no-ops.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	bsmlock "github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// benchTTL is long enough that no lease expires during a benchmark.
const benchTTL = 10 * time.Second

// contender is one way of taking and giving up a lock on a key: tryLock
// reports whether it got the lock and returns the function that releases it.
type contender struct {
	name    string
	key     string // its name in make bench's benchstat input
	tryLock func(ctx context.Context, key string) (release func(context.Context) error, ok bool, err error)
	close   func()
}

// compareAndDelete is the owner-checked release every correct Redis lock
// needs; with SET NX PX it is the floor of a lock round.
var compareAndDelete = redis.NewScript(
	`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

func contenders(client *redis.Client) []contender {
	// The defaults a team gets: calls alone while fewer than
	// redisbatch.DefaultLanes are in flight, batched beyond.
	backend := redislock.New(client)
	ours := lock.New(backend, lock.Config{})
	// Every call alone: what batching costs one call when few run at
	// once, next to what it saves a crowd.
	aloneBackend := redislock.New(client, redislock.WithBatchLanes(0))
	alone := lock.New(aloneBackend, lock.Config{})
	// Two lanes, as seatlock's BATCH_LANES default runs it.
	servedBackend := redislock.New(client, redislock.WithBatchLanes(2))
	served := lock.New(servedBackend, lock.Config{})
	acquireWith := func(c *lock.Client) func(ctx context.Context, key string) (func(context.Context) error, bool, error) {
		return func(ctx context.Context, key string) (func(context.Context) error, bool, error) {
			l, err := c.Acquire(ctx, key, lock.Options{TTL: benchTTL})
			if errors.Is(err, lock.ErrHeld) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			return l.Release, true, nil
		}
	}
	// go-redis's own auto-pipelining instead of redisbatch's: the calls go
	// through the client's AutoPipeliner, the backend's batching off.
	ap, apErr := client.AutoPipeline()
	autoTry := func(context.Context, string) (func(context.Context) error, bool, error) { return nil, false, apErr }
	autoClose := func() {}
	if apErr == nil {
		autoBackend := redislock.New(autoPipelined{Scripter: ap, ap: ap, client: client}, redislock.WithBatchLanes(0))
		auto := lock.New(autoBackend, lock.Config{})
		autoTry = acquireWith(auto)
		autoClose = func() { auto.Close(); _ = autoBackend.Close(); _ = ap.Close() }
	}
	bsm := bsmlock.New(client)
	rs := redsync.New(goredis.NewPool(client))
	return []contender{
		{
			name: "floor: SET NX PX + EVALSHA compare-and-delete",
			key:  "floor",
			tryLock: func(ctx context.Context, key string) (func(context.Context) error, bool, error) {
				token := randomToken()
				ok, err := client.SetNX(ctx, key, token, benchTTL).Result()
				if err != nil || !ok {
					return nil, false, err
				}
				return func(ctx context.Context) error {
					return compareAndDelete.Run(ctx, client, []string{key}, token).Err()
				}, true, nil
			},
		},
		{
			name:    "seatlock redislock (lock.Client), redislock.New defaults",
			key:     "defaults",
			tryLock: acquireWith(ours),
			close:   func() { ours.Close(); _ = backend.Close() },
		},
		{
			name:    "seatlock redislock (lock.Client), every call alone",
			key:     "alone",
			tryLock: acquireWith(alone),
			close:   func() { alone.Close(); _ = aloneBackend.Close() },
		},
		{
			name:    "seatlock redislock (lock.Client), 2 lanes (BATCH_LANES default)",
			key:     "lanes2",
			tryLock: acquireWith(served),
			close:   func() { served.Close(); _ = servedBackend.Close() },
		},
		{
			name:    "seatlock redislock (lock.Client), over go-redis AutoPipeliner (own batching off)",
			key:     "autopipeline",
			tryLock: autoTry,
			close:   autoClose,
		},
		{
			name: "github.com/bsm/redislock",
			key:  "bsm",
			tryLock: func(ctx context.Context, key string) (func(context.Context) error, bool, error) {
				l, err := bsm.Obtain(ctx, key, benchTTL, nil)
				if errors.Is(err, bsmlock.ErrNotObtained) {
					return nil, false, nil
				}
				if err != nil {
					return nil, false, err
				}
				return l.Release, true, nil
			},
		},
		{
			name: "github.com/go-redsync/redsync/v4",
			key:  "redsync",
			tryLock: func(ctx context.Context, key string) (func(context.Context) error, bool, error) {
				m := rs.NewMutex(key, redsync.WithExpiry(benchTTL), redsync.WithTries(1))
				err := m.TryLockContext(ctx)
				var taken *redsync.ErrTaken
				if errors.As(err, &taken) || errors.Is(err, redsync.ErrFailed) {
					return nil, false, nil
				}
				if err != nil {
					return nil, false, err
				}
				return func(ctx context.Context) error { _, err := m.UnlockContext(ctx); return err }, true, nil
			},
		},
	}
}

// autoPipelined is a redislock.Client (and a redisbatch.Doer) whose script
// calls ride go-redis's AutoPipeliner and whose Pub/Sub is the plain
// client's. The AutoPipeliner's own Do runs each command alone, outside its
// pipeline, so Do here goes through Process, which batches.
type autoPipelined struct {
	redis.Scripter // the AutoPipeliner
	ap             *redis.AutoPipeliner
	client         *redis.Client
}

func (a autoPipelined) Do(ctx context.Context, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	_ = a.ap.Process(ctx, cmd) // the error is cmd's
	return cmd
}

func (a autoPipelined) Subscribe(ctx context.Context, channels ...string) *redis.PubSub {
	return a.client.Subscribe(ctx, channels...)
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
