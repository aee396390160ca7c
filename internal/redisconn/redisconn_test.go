package redisconn_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/testenv"
)

func open(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	client, err := redisconn.Open(url)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func standalone(t *testing.T, url string) *redis.Options {
	t.Helper()
	client, ok := open(t, url).(*redis.Client)
	if !ok {
		t.Fatalf("Open(%q) is not a *redis.Client", url)
	}
	return client.Options()
}

func cluster(t *testing.T, url string) *redis.ClusterOptions {
	t.Helper()
	client, ok := open(t, url).(*redis.ClusterClient)
	if !ok {
		t.Fatalf("Open(%q) is not a *redis.ClusterClient", url)
	}
	return client.Options()
}

func TestStandaloneURLs(t *testing.T) {
	tests := []struct {
		url                string
		addr               string
		db                 int
		user, password     string
		tls                bool
		dialTimeout        time.Duration
		network, clientTag string
		protocol           int
	}{
		{url: "redis://127.0.0.1:6380/2", addr: "127.0.0.1:6380", db: 2},
		{url: "redis://localhost", addr: "localhost:6379"},
		{url: "redis://:s3cret@cache:6379/0", addr: "cache:6379", password: "s3cret"},
		{url: "redis://app:p%40ss%3Aw%2Frd@cache:6379", addr: "cache:6379", user: "app", password: "p@ss:w/rd"},
		{url: "redis://app:pa:ss@cache:6379", addr: "cache:6379", user: "app", password: "pa:ss"},
		{url: "REDIS://cache:7000", addr: "cache:7000"},
		{url: "rediss://app:pw@cache.example:6380/1", addr: "cache.example:6380", db: 1, user: "app", password: "pw", tls: true},
		{url: "redis://[::1]:6390", addr: "[::1]:6390"},
		{url: "redis://cache:6379?dial_timeout=5s&client_name=seatlock", addr: "cache:6379", dialTimeout: 5 * time.Second, clientTag: "seatlock"},
		{url: "redis://cache:6379?protocol=3", addr: "cache:6379", protocol: 3},
		{url: "unix://app:pw@/run/redis.sock?db=3", addr: "/run/redis.sock", db: 3, user: "app", password: "pw", network: "unix"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			o := standalone(t, tt.url)
			network := tt.network
			if network == "" {
				network = "tcp"
			}
			dialTimeout := tt.dialTimeout
			if dialTimeout == 0 {
				dialTimeout = redisconn.DialTimeout
			}
			if o.Network != network || o.Addr != tt.addr || o.DB != tt.db {
				t.Errorf("network %q addr %q db %d, want %q %q %d", o.Network, o.Addr, o.DB, network, tt.addr, tt.db)
			}
			if o.Username != tt.user || o.Password != tt.password {
				t.Errorf("credentials %q:%q, want %q:%q", o.Username, o.Password, tt.user, tt.password)
			}
			if (o.TLSConfig != nil) != tt.tls {
				t.Errorf("TLS config %v, want TLS %v", o.TLSConfig, tt.tls)
			}
			if o.ClientName != tt.clientTag {
				t.Errorf("client name %q, want %q", o.ClientName, tt.clientTag)
			}
			if o.MaxRetries != redisconn.MaxRetries {
				t.Errorf("MaxRetries = %d, want %d (lock scripts are idempotent per token)", o.MaxRetries, redisconn.MaxRetries)
			}
			if protocol := cmp.Or(tt.protocol, redisconn.Protocol); o.Protocol != protocol {
				t.Errorf("Protocol = %d, want RESP%d", o.Protocol, protocol)
			}
			if !o.ContextTimeoutEnabled || o.DialTimeout != dialTimeout ||
				o.ReadTimeout != redisconn.ReadTimeout || o.WriteTimeout != redisconn.WriteTimeout {
				t.Errorf("ContextTimeoutEnabled %v, timeouts dial %v read %v write %v; want true, %v %v %v",
					o.ContextTimeoutEnabled, o.DialTimeout, o.ReadTimeout, o.WriteTimeout,
					dialTimeout, redisconn.ReadTimeout, redisconn.WriteTimeout)
			}
		})
	}
}

func TestClusterURLs(t *testing.T) {
	tests := []struct {
		url            string
		addrs          []string
		user, password string
		tls            bool
		check          func(t *testing.T, o *redis.ClusterOptions)
	}{
		{
			url:   "redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002",
			addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"},
		},
		{url: "redis+cluster://node-a:7000", addrs: []string{"node-a:7000"}},
		{url: "redis+cluster://node-a,node-b/", addrs: []string{"node-a:6379", "node-b:6379"}},
		{url: "redis+cluster://node-a:7000/0", addrs: []string{"node-a:7000"}},
		{url: "Redis+Cluster://node-a:7000", addrs: []string{"node-a:7000"}},
		{url: "redis+cluster://[::1]:7000,[::1]:7001,[::1]", addrs: []string{"[::1]:7000", "[::1]:7001", "[::1]:6379"}},
		{
			url:   "redis+cluster://app:p%40ss%2Cw@n1:7000,n2:7001",
			addrs: []string{"n1:7000", "n2:7001"}, user: "app", password: "p@ss,w",
		},
		{url: "redis+cluster://:s3cret@n1:7000", addrs: []string{"n1:7000"}, password: "s3cret"},
		{
			url:   "rediss+cluster://app:pw@n1.example:7000,n2.example:7001",
			addrs: []string{"n1.example:7000", "n2.example:7001"}, user: "app", password: "pw", tls: true,
		},
		{
			url:   "redis+cluster://n1:7000,n2:7001?max_redirects=5&route_randomly=true&dial_timeout=3s",
			addrs: []string{"n1:7000", "n2:7001"},
			check: func(t *testing.T, o *redis.ClusterOptions) {
				if o.MaxRedirects != 5 || !o.RouteRandomly || o.DialTimeout != 3*time.Second {
					t.Errorf("max_redirects %d route_randomly %v dial_timeout %v, want 5 true 3s", o.MaxRedirects, o.RouteRandomly, o.DialTimeout)
				}
			},
		},
		// go-redis's own cluster form.
		{
			url:   "redis://app:pw@n1:7000?addr=n2:7001&addr=n3:7002",
			addrs: []string{"n1:7000", "n2:7001", "n3:7002"}, user: "app", password: "pw",
		},
		{url: "rediss://n1:7000?addr=n2:7001", addrs: []string{"n1:7000", "n2:7001"}, tls: true},
		{url: "redis+cluster://n1:7000?addr=n2:7001", addrs: []string{"n1:7000", "n2:7001"}},
		{url: "redis+cluster://?addr=n1:7000&addr=n2:7001", addrs: []string{"n1:7000", "n2:7001"}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			o := cluster(t, tt.url)
			if !slices.Equal(o.Addrs, tt.addrs) {
				t.Errorf("addrs %q, want %q", o.Addrs, tt.addrs)
			}
			if o.Username != tt.user || o.Password != tt.password {
				t.Errorf("credentials %q:%q, want %q:%q", o.Username, o.Password, tt.user, tt.password)
			}
			if (o.TLSConfig != nil) != tt.tls {
				t.Errorf("TLS config %v, want TLS %v", o.TLSConfig, tt.tls)
			}
			if o.Protocol != redisconn.Protocol {
				t.Errorf("Protocol = %d, want RESP%d", o.Protocol, redisconn.Protocol)
			}
			if o.MaxRetries != -1 {
				t.Errorf("MaxRetries = %d, want -1: node retries off, the cluster client retries through its redirects", o.MaxRetries)
			}
			if !strings.Contains(tt.url, "max_redirects") && o.MaxRedirects != 3 {
				t.Errorf("MaxRedirects = %d, want go-redis' 3", o.MaxRedirects)
			}
			if !o.ContextTimeoutEnabled || o.ReadTimeout != redisconn.ReadTimeout || o.WriteTimeout != redisconn.WriteTimeout {
				t.Errorf("ContextTimeoutEnabled %v, read %v, write %v", o.ContextTimeoutEnabled, o.ReadTimeout, o.WriteTimeout)
			}
			if tt.check != nil {
				tt.check(t, o)
			} else if o.DialTimeout != redisconn.DialTimeout {
				t.Errorf("dial timeout %v, want %v", o.DialTimeout, redisconn.DialTimeout)
			}
		})
	}
}

func TestInvalidURLs(t *testing.T) {
	const secret = "s3cr3t-PW"
	tests := []struct{ url, want string }{
		{"", "empty"},
		{"localhost:6379", "no scheme"},
		{"app:" + secret + "@cache:6379", "no scheme"},
		{"app:" + secret + "@cache://x", "no scheme"},
		{"http://app:" + secret + "@cache:6379", "invalid URL scheme"},
		{"memcached+cluster://app:" + secret + "@n1:7000", "scheme"},
		{"redis://app:" + secret + "@cache:6379/notanumber", "database"},
		{"redis://app:" + secret + "@cache:6379/1/2", "path"},
		{"redis://app:" + secret + "@cache:6379?bogus=1", "unexpected option: bogus"},
		{"redis://app:" + secret + "@cache:6379?dial_timeout=banana", "dial_timeout"},
		{"redis://app:" + secret + "@cache:notaport", "port"},
		{"redis://app:" + secret + "%zz@cache:6379", "percent-encoding"},
		{"redis://app:" + secret + "/x@cache:6379", "percent-encode"},
		{"redis://app:" + secret + "?x@cache:6379", "percent-encode"},
		{"redis://app:" + secret + "#x@cache:6379", "percent-encode"},
		{"redis+cluster://app:" + secret + "@", "empty cluster node address"},
		{"redis+cluster://app:" + secret + "@n1:7000,,n2:7001", "empty cluster node address"},
		{"redis+cluster://app:" + secret + "@n1:7000,:7001", "no host"},
		{"redis+cluster://app:" + secret + "@n1:notaport", "port"},
		{"redis+cluster://app:" + secret + "@n1:99999", "port"},
		{"redis+cluster://app:" + secret + "@n1:7000/2", "only database 0"},
		{"redis+cluster://app:" + secret + "@n1:7000?bogus=1", "unexpected option: bogus"},
		{"redis+cluster://app:" + secret + "@n1:7000?read_timeout=soon", "read_timeout"},
		{"redis+cluster://app:" + secret + "@n1:7000?addr=n2", "addr"},
		{"redis://app:" + secret + "@n1:7000?addr=n2:7001&bogus=1", "unexpected option: bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			client, err := redisconn.Open(tt.url)
			if err == nil {
				_ = client.Close()
				t.Fatalf("Open(%q) = %T, want an error", tt.url, client)
			}
			msg := err.Error()
			if strings.Contains(strings.ToLower(msg), strings.ToLower(secret)) {
				t.Errorf("error contains the password: %s", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not mention %q", msg, tt.want)
			}
			t.Log(msg)
		})
	}
}

// The error names the URL, with the password masked, to say which one is wrong.
func TestErrorShowsRedactedURL(t *testing.T) {
	_, err := redisconn.Open("redis+cluster://app:hunter2@n1:7000,n2:7001/5")
	if err == nil || !strings.Contains(err.Error(), "redis+cluster://app:xxxxx@n1:7000,n2:7001/5") {
		t.Fatalf("got %v, want the URL with the password masked", err)
	}
}

func TestOpenConnectsToTheTestCluster(t *testing.T) {
	client, ok := open(t, testenv.RedisClusterURL(t)).(*redis.ClusterClient)
	if !ok {
		t.Fatal("TEST_REDIS_CLUSTER_URL did not open a *redis.ClusterClient")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	var masters atomic.Int32
	err := client.ForEachMaster(ctx, func(ctx context.Context, master *redis.Client) error {
		masters.Add(1)
		return master.Ping(ctx).Err()
	})
	if err != nil {
		t.Fatalf("PING each master: %v", err)
	}
	if n := masters.Load(); n != 3 {
		t.Errorf("%d masters, want the 3 of the test cluster", n)
	}
	if info := client.ClusterInfo(ctx).Val(); !strings.Contains(info, "cluster_state:ok") {
		t.Errorf("CLUSTER INFO: %s", info)
	}
}

func TestOpenConnectsToTheTestRedis(t *testing.T) {
	client, ok := open(t, testenv.RedisURL(t)).(*redis.Client)
	if !ok {
		t.Fatal("TEST_REDIS_URL did not open a *redis.Client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
}
