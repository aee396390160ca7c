package opsmetrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// RegisterPostgresPool exports the statistics of pool, read at each scrape.
func RegisterPostgresPool(reg prometheus.Registerer, pool *pgxpool.Pool) error {
	stat := func(f func(*pgxpool.Stat) float64) func() float64 {
		return func() float64 { return f(pool.Stat()) }
	}
	return register(reg,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_pg_pool_acquired_conns", Help: "PostgreSQL connections in use."},
			stat(func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_pg_pool_idle_conns", Help: "PostgreSQL connections idle in the pool."},
			stat(func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_pg_pool_max_conns", Help: "The pool's size limit."},
			stat(func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_pg_pool_acquires_total", Help: "Connections taken from the pool."},
			stat(func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_pg_pool_empty_acquires_total",
			Help: "Acquires that had to wait for a connection: the pool was saturated."},
			stat(func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_pg_pool_acquire_wait_seconds_total",
			Help: "Time spent waiting for pool connections."},
			stat(func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() })),
	)
}

// RegisterRedisPool exports the statistics of a go-redis client's pool,
// labelled with its use ("locks", "feed", "ratelimit").
func RegisterRedisPool(reg prometheus.Registerer, use string, client redis.UniversalClient) error {
	labels := prometheus.Labels{"pool": use}
	stat := func(f func(*redis.PoolStats) float64) func() float64 {
		return func() float64 { return f(client.PoolStats()) }
	}
	return register(reg,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_redis_pool_total_conns", Help: "Redis connections open.", ConstLabels: labels},
			stat(func(s *redis.PoolStats) float64 { return float64(s.TotalConns) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatlock_redis_pool_idle_conns", Help: "Redis connections idle in the pool.", ConstLabels: labels},
			stat(func(s *redis.PoolStats) float64 { return float64(s.IdleConns) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_redis_pool_hits_total", Help: "Connections found idle in the pool.", ConstLabels: labels},
			stat(func(s *redis.PoolStats) float64 { return float64(s.Hits) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_redis_pool_misses_total", Help: "Connections that had to be dialled.", ConstLabels: labels},
			stat(func(s *redis.PoolStats) float64 { return float64(s.Misses) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seatlock_redis_pool_timeouts_total",
			Help: "Waits for a connection that timed out: the pool was saturated.", ConstLabels: labels},
			stat(func(s *redis.PoolStats) float64 { return float64(s.Timeouts) })),
	)
}

func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
