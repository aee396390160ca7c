package lockenv

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The settings of the clients RedisAt and RedisCluster return: those of a
// lock client in production, so that faults meet the same timeouts and
// retries. Context deadlines bound every call (ContextTimeoutEnabled).
// A standalone client re-sends a command after a transport error (a reset
// or closed connection) up to MaxRetries times, which the lock scripts
// allow since each is idempotent per owner token; a cluster client keeps
// per-node retries off (go-redis' cluster default) and retries through its
// redirects instead, which node retries would multiply. Both speak
// RESP2: on RESP3 go-redis looks for push notifications before every reply.
const (
	DialTimeout  = 2 * time.Second
	ReadTimeout  = time.Second
	WriteTimeout = time.Second
	MaxRetries   = 3
	protocol     = 2
)

// RedisAt returns a client of the standalone Redis at addr ("host:port")
// with the settings above, closed when the test ends.
func RedisAt(tb testing.TB, addr string) *redis.Client {
	tb.Helper()
	client := redis.NewClient(&redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           DialTimeout,
		ReadTimeout:           ReadTimeout,
		WriteTimeout:          WriteTimeout,
		MaxRetries:            MaxRetries,
		Protocol:              protocol,
	})
	tb.Cleanup(func() { _ = client.Close() })
	return client
}

// RedisClusterURL returns the URL of the shared Redis Cluster, its masters
// as redis+cluster://host1:port1,host2:port2,...: TEST_REDIS_CLUSTER_URL, or
// three redis-server nodes of the binary's own (see Run). It fails the test
// when there is none.
func RedisClusterURL(tb testing.TB) string {
	tb.Helper()
	return serverURL(tb, clusterEnv)
}

// RedisCluster returns a client of the shared Redis Cluster with the settings
// above, closed when the test ends.
func RedisCluster(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	raw := RedisClusterURL(tb)
	hosts, ok := strings.CutPrefix(raw, "redis+cluster://")
	if !ok || hosts == "" || strings.ContainsAny(hosts, "@/?#") {
		// The value is not echoed: it may hold a password.
		tb.Fatal("TEST_REDIS_CLUSTER_URL: want redis+cluster://host:port[,host:port...]")
	}
	cluster := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:                 strings.Split(hosts, ","),
		ContextTimeoutEnabled: true,
		DialTimeout:           DialTimeout,
		ReadTimeout:           ReadTimeout,
		WriteTimeout:          WriteTimeout,
		Protocol:              protocol,
	})
	tb.Cleanup(func() { _ = cluster.Close() })
	return cluster
}
