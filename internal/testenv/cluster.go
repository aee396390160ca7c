package testenv

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/redisconn"
)

// RedisClusterURL returns TEST_REDIS_CLUSTER_URL (a redis+cluster:// URL of
// the 3-master cluster that `make test` starts) or fails the test.
func RedisClusterURL(tb testing.TB) string { return mustEnv(tb, "TEST_REDIS_CLUSTER_URL") }

// RedisCluster returns a client of the test Redis Cluster, opened as the
// service opens REDIS_URL (redisconn.Open) and closed when the test ends.
func RedisCluster(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	client, err := redisconn.Open(RedisClusterURL(tb))
	if err != nil {
		tb.Fatalf("open TEST_REDIS_CLUSTER_URL: %v", err)
	}
	cluster, ok := client.(*redis.ClusterClient)
	if !ok {
		_ = client.Close()
		tb.Fatalf("TEST_REDIS_CLUSTER_URL opened a %T, want *redis.ClusterClient", client)
	}
	tb.Cleanup(func() { _ = cluster.Close() })
	return cluster
}
