package app

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/pglock"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/redisconn"
)

// lockStore is the lock backend LOCK_BACKEND chose, with what readiness
// must check and how to close it.
type lockStore struct {
	backend backend.Backend
	pruner  lockPruner // nil when the store needs no pruning
	checks  []httpapi.Check
	close   func()
	redis   redis.UniversalClient // nil unless the store is Redis
}

// lockReleaseChannel is the NOTIFY channel of the PostgreSQL lock backend's
// releases. Every instance on a database must use the same one to wake the
// others' waiters, so it stays the name instances have always used, not
// pglock's default; its table is pglock's default, "locks", which the
// migrations create.
const lockReleaseChannel = "seatlock_lock_released"

func openLockBackend(cfg config.Config, pool *pgxpool.Pool) (lockStore, error) {
	switch cfg.LockBackend {
	case config.BackendPostgres:
		b := pglock.New(pool, pglock.WithChannel(lockReleaseChannel))
		return lockStore{backend: b, pruner: b, close: func() { _ = b.Close() }}, nil
	case config.BackendRedis:
		client, err := redisconn.Open(cfg.RedisURL)
		if err != nil {
			return lockStore{}, err
		}
		b := redislock.New(client, redislock.WithBatchLanes(cfg.BatchLanes))
		return lockStore{
			backend: b,
			redis:   client,
			checks:  []httpapi.Check{{Name: "redis", Ping: func(ctx context.Context) error { return client.Ping(ctx).Err() }}},
			close: func() {
				_ = b.Close()
				_ = client.Close()
			},
		}, nil
	default:
		return lockStore{}, errNoBackend
	}
}

// feedLanes is BATCH_LANES as seatfeed.Config takes it: there, as for its
// other settings, 0 means the default, and a negative number no batching.
func feedLanes(cfg config.Config) int {
	if cfg.BatchLanes == 0 {
		return -1
	}
	return cfg.BatchLanes
}
