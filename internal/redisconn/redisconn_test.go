package redisconn_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
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
		// Bytes net/url refuses in user info are taken as written.
		{url: "redis://app:p^a|s s{}@cache:6379", addr: "cache:6379", user: "app", password: "p^a|s s{}"},
		{url: "redis://app@cache:6379", addr: "cache:6379", user: "app"},
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
		{url: "redis+cluster://app:p^w d@n1:7000", addrs: []string{"n1:7000"}, user: "app", password: "p^w d"},
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
		{url: "redis://n1?addr=n2:7001", addrs: []string{"n1:6379", "n2:7001"}},
		{url: "redis://n1:7000/0?addr=n2:7001", addrs: []string{"n1:7000", "n2:7001"}},
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
		{"redis://app:" + secret + "@n1:7000/2?addr=n2:7001", "only database 0"},
		{"redis://app:" + secret + "@ca che:6379", "invalid character"},
		{"rediss://app:" + secret + "@cache:6379?skip_verify=maybe", "skip_verify"},
		{"unix://app:" + secret + "@", "empty unix socket path"},
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
			// config shows a URLError's reason alone: it must not quote the
			// URL (net/url's errors do).
			if bad := (*redisconn.URLError)(nil); errors.As(err, &bad) && strings.Contains(bad.Err.Error(), "://") {
				t.Errorf("the reason of %q quotes the URL", msg)
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
	client, ok := open(t, lockenv.RedisClusterURL(t)).(*redis.ClusterClient)
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
	client, ok := open(t, lockenv.RedisURL(t)).(*redis.Client)
	if !ok {
		t.Fatal("TEST_REDIS_URL did not open a *redis.Client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
}

// failover opens a Sentinel URL and returns the options go-redis's failover
// client was built from (Open's client hides them).
func failover(t *testing.T, url string) *redis.FailoverOptions {
	t.Helper()
	opts, err := redisconn.FailoverOptions(url)
	if err != nil {
		t.Fatalf("FailoverOptions(%q): %v", url, err)
	}
	if _, ok := open(t, url).(*redis.Client); !ok {
		t.Fatalf("Open(%q) is not a *redis.Client (go-redis's failover client is one)", url)
	}
	return opts
}

func TestSentinelURLs(t *testing.T) {
	tests := []struct {
		url                            string
		sentinels                      []string
		master                         string
		db                             int
		user, password                 string
		sentinelUser, sentinelPassword string
		tls                            bool
		check                          func(t *testing.T, o *redis.FailoverOptions)
	}{
		{
			url:       "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380,127.0.0.1:26381/mymaster",
			sentinels: []string{"127.0.0.1:26379", "127.0.0.1:26380", "127.0.0.1:26381"}, master: "mymaster",
		},
		{url: "redis+sentinel://s1/mymaster/3", sentinels: []string{"s1:26379"}, master: "mymaster", db: 3},
		{url: "redis+sentinel://s1,s2:26380/mymaster/", sentinels: []string{"s1:26379", "s2:26380"}, master: "mymaster"},
		{url: "Redis+Sentinel://s1:5000/my%2Fmaster/0", sentinels: []string{"s1:5000"}, master: "my/master"},
		{url: "redis+sentinel://[::1]:26379,[::1]/m", sentinels: []string{"[::1]:26379", "[::1]:26379"}, master: "m"},
		{
			url:       "redis+sentinel://app:p%40ss%2Cw@s1:26379,s2:26379/mymaster/1",
			sentinels: []string{"s1:26379", "s2:26379"}, master: "mymaster", db: 1, user: "app", password: "p@ss,w",
		},
		{url: "redis+sentinel://:s3cret@s1/mymaster", sentinels: []string{"s1:26379"}, master: "mymaster", password: "s3cret"},
		{url: "redis+sentinel://app:p^w d@s1/mymaster", sentinels: []string{"s1:26379"}, master: "mymaster", user: "app", password: "p^w d"},
		{url: "rediss+sentinel://s1.example/mymaster", sentinels: []string{"s1.example:26379"}, master: "mymaster", tls: true},
		{
			url:       "redis+sentinel://s1/mymaster?dial_timeout=3s&pool_size=7&max_retries=-1&client_name=seatlock",
			sentinels: []string{"s1:26379"}, master: "mymaster",
			check: func(t *testing.T, o *redis.FailoverOptions) {
				if o.DialTimeout != 3*time.Second || o.PoolSize != 7 || o.MaxRetries != -1 || o.ClientName != "seatlock" {
					t.Errorf("dial_timeout %v pool_size %d max_retries %d client_name %q, want 3s 7 -1 seatlock",
						o.DialTimeout, o.PoolSize, o.MaxRetries, o.ClientName)
				}
			},
		},
		// go-redis's own form: the user info is the Sentinels', the
		// username and password options the servers'.
		{
			url:       "redis://su:sp@s1:26379/2?master_name=mymaster&addr=s2:26380&password=srv",
			sentinels: []string{"s1:26379", "s2:26380"}, master: "mymaster", db: 2,
			password: "srv", sentinelUser: "su", sentinelPassword: "sp",
		},
		{url: "rediss://s1:26379?master_name=mymaster", sentinels: []string{"s1:26379"}, master: "mymaster", tls: true},
		{
			url:       "redis://s1:26379?master_name=mymaster&db=4&username=app&password=srv",
			sentinels: []string{"s1:26379"}, master: "mymaster", db: 4, user: "app", password: "srv",
		},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			o := failover(t, tt.url)
			if !slices.Equal(o.SentinelAddrs, tt.sentinels) || o.MasterName != tt.master || o.DB != tt.db {
				t.Errorf("sentinels %q master %q db %d, want %q %q %d", o.SentinelAddrs, o.MasterName, o.DB, tt.sentinels, tt.master, tt.db)
			}
			if o.Username != tt.user || o.Password != tt.password {
				t.Errorf("server credentials %q:%q, want %q:%q", o.Username, o.Password, tt.user, tt.password)
			}
			if o.SentinelUsername != tt.sentinelUser || o.SentinelPassword != tt.sentinelPassword {
				t.Errorf("Sentinel credentials %q:%q, want %q:%q", o.SentinelUsername, o.SentinelPassword, tt.sentinelUser, tt.sentinelPassword)
			}
			if (o.TLSConfig != nil) != tt.tls {
				t.Errorf("TLS config %v, want TLS %v", o.TLSConfig, tt.tls)
			}
			if o.Protocol != redisconn.Protocol {
				t.Errorf("Protocol = %d, want RESP%d", o.Protocol, redisconn.Protocol)
			}
			if o.RouteByLatency || o.RouteRandomly || o.ReplicaOnly {
				t.Error("a Sentinel client must send every command to the master")
			}
			if !o.ContextTimeoutEnabled || o.ReadTimeout != redisconn.ReadTimeout || o.WriteTimeout != redisconn.WriteTimeout {
				t.Errorf("ContextTimeoutEnabled %v, read %v, write %v", o.ContextTimeoutEnabled, o.ReadTimeout, o.WriteTimeout)
			}
			if tt.check != nil {
				tt.check(t, o)
				return
			}
			if o.DialTimeout != redisconn.DialTimeout || o.MaxRetries != redisconn.MaxRetries {
				t.Errorf("dial timeout %v, max retries %d; want %v %d", o.DialTimeout, o.MaxRetries, redisconn.DialTimeout, redisconn.MaxRetries)
			}
		})
	}
}

func TestInvalidSentinelURLs(t *testing.T) {
	const secret = "s3cr3t-PW"
	tests := []struct{ url, want string }{
		{"redis+sentinel://app:" + secret + "@s1:26379,s2:26379", "no Sentinel master name"},
		{"redis+sentinel://app:" + secret + "@s1:26379/", "no Sentinel master name"},
		{"redis+sentinel://app:" + secret + "@s1:26379//0", "no Sentinel master name"},
		{"redis+sentinel://app:" + secret + "@s1:26379?master_name=m", "no Sentinel master name"},
		{"redis+sentinel://app:" + secret + "@/mymaster", "empty Sentinel address"},
		{"redis+sentinel://app:" + secret + "@s1:26379,,s2/mymaster", "empty Sentinel address"},
		{"redis+sentinel://app:" + secret + "@:26379/mymaster", "no host in Sentinel address"},
		{"redis+sentinel://app:" + secret + "@s1:notaport/mymaster", "invalid port in Sentinel address"},
		{"redis+sentinel://app:" + secret + "@s1:0/mymaster", "invalid port in Sentinel address"},
		{"redis+sentinel://app:" + secret + "@s1:65536/mymaster", "invalid port in Sentinel address"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster/x", "invalid database number"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster/-1", "invalid database number"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster/1/2", "more than a master name and a database"},
		{"redis+sentinel://app:" + secret + "@s1/my%zzmaster", "percent-encoding"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster?bogus=1", "unexpected option: bogus"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster?read_timeout=soon", "read_timeout"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster?addr=s2:26379", "option addr"},
		{"redis+sentinel://app@s1/mymaster?password=" + secret, "option password"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster?route_by_latency=true", "locks need the master"},
		{"redis+sentinel://app:" + secret + "@s1/mymaster?replica_only=true", "locks need the master"},
		{"memcached+sentinel://app:" + secret + "@s1/mymaster", "scheme"},
		{"redis://app:" + secret + "@s1:26379?master_name=", "no Sentinel master name"},
		{"redis://app:" + secret + "@s1:26379?master_name=m&route_randomly=true", "locks need the master"},
		{"redis://app:" + secret + "@s1:26379?master_name=m&addr=s2", "addr"},
		{"redis://s1:26379?master_name=m&password=" + secret + "&bogus=1", "unexpected option: bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			client, err := redisconn.Open(tt.url)
			if err == nil {
				_ = client.Close()
				t.Fatalf("Open(%q) = %T, want an error", tt.url, client)
			}
			if err2 := redisconn.Check(tt.url); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Check = %v, want Open's error %v", err2, err)
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

// Check accepts what Open accepts, of every kind.
func TestCheckAcceptsEveryForm(t *testing.T) {
	for _, url := range []string{
		"redis://127.0.0.1:6379/0",
		"unix:///run/redis.sock",
		"redis+cluster://n1:7000,n2:7001",
		"redis://n1:7000?addr=n2:7001",
		"redis+sentinel://s1,s2,s3/mymaster/0",
		"redis://s1:26379?master_name=mymaster",
	} {
		if err := redisconn.Check(url); err != nil {
			t.Errorf("Check(%q): %v", url, err)
		}
	}
}

func TestKindOfEveryForm(t *testing.T) {
	for url, want := range map[string]redisconn.Kind{
		"redis://127.0.0.1:6379/0":              redisconn.Standalone,
		"rediss://127.0.0.1:6379/0":             redisconn.Standalone,
		"unix:///run/redis.sock":                redisconn.Standalone,
		"redis+cluster://n1:7000,n2:7001":       redisconn.Cluster,
		"redis://n1:7000?addr=n2:7001":          redisconn.Cluster,
		"redis+sentinel://s1,s2,s3/mymaster/0":  redisconn.Sentinel,
		"rediss+sentinel://s1/mymaster":         redisconn.Sentinel,
		"redis://s1:26379?master_name=mymaster": redisconn.Sentinel,
	} {
		if got, err := redisconn.KindOf(url); err != nil || got != want {
			t.Errorf("KindOf(%q) = %v, %v; want %v", url, got, err, want)
		}
	}
	if _, err := redisconn.KindOf("redis+sentinel://s1"); err == nil {
		t.Error("KindOf of a Sentinel URL without a master name: no error")
	}
}

// A Sentinel URL opens a client of the master the Sentinels name, for
// commands and Pub/Sub alike.
func TestOpenConnectsThroughSentinel(t *testing.T) {
	s := testenv.StartSentinel(t)
	client := open(t, s.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Set(ctx, "sentinel-check", "written", 0).Err(); err != nil {
		t.Fatalf("SET through Sentinel: %v", err)
	}
	primary := redis.NewClient(&redis.Options{Addr: s.Servers[0].Addr})
	defer func() { _ = primary.Close() }()
	if v := primary.Get(ctx, "sentinel-check").Val(); v != "written" {
		t.Errorf("the primary has %q, want the value written through Sentinel", v)
	}
	info := client.Info(ctx, "replication").Val()
	if !strings.Contains(info, "role:master") {
		t.Errorf("the client speaks to a replica: %s", info)
	}
}

// WithMinPoolSize raises the pool of every kind of client to at least the
// size asked for, and never lowers a larger pool_size from the URL.
func TestWithMinPoolSize(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want int
	}{
		{"redis://127.0.0.1:6379/0", 500},
		{"redis://127.0.0.1:6379/0?pool_size=900", 900},
		{"redis+cluster://127.0.0.1:7000,127.0.0.1:7001", 500},
		{"redis+sentinel://127.0.0.1:26379/mymaster", 500},
	} {
		c, err := redisconn.Open(tt.url, redisconn.WithMinPoolSize(500))
		if err != nil {
			t.Fatalf("Open(%s): %v", tt.url, err)
		}
		var got int
		switch c := c.(type) {
		case *redis.Client:
			got = c.Options().PoolSize
		case *redis.ClusterClient:
			got = c.Options().PoolSize
		default:
			t.Fatalf("Open(%s) = %T", tt.url, c)
		}
		_ = c.Close()
		if got != tt.want {
			t.Errorf("Open(%s) pool size %d, want %d", tt.url, got, tt.want)
		}
	}
}

// Every kind of client's connections get BufferSize each way, or
// WithBufferSize's size, and its pipeline connections PipelineBufferSize:
// not go-redis's 32 and 128 KiB, megabytes of buffers for small commands.
func TestBufferSizes(t *testing.T) {
	for _, url := range []string{
		"redis://127.0.0.1:6379/0",
		"redis+cluster://127.0.0.1:7000,127.0.0.1:7001",
		"redis+sentinel://127.0.0.1:26379/mymaster",
	} {
		for _, size := range []int{0, 4096} {
			var options []redisconn.Option
			want := redisconn.BufferSize
			if size > 0 {
				options = append(options, redisconn.WithBufferSize(size))
				want = size
			}
			c, err := redisconn.Open(url, options...)
			if err != nil {
				t.Fatalf("Open(%s): %v", url, err)
			}
			var got [4]int
			switch c := c.(type) {
			case *redis.Client:
				o := c.Options()
				got = [4]int{o.ReadBufferSize, o.WriteBufferSize, o.PipelineReadBufferSize, o.PipelineWriteBufferSize}
			case *redis.ClusterClient:
				o := c.Options()
				got = [4]int{o.ReadBufferSize, o.WriteBufferSize, o.PipelineReadBufferSize, o.PipelineWriteBufferSize}
			default:
				t.Fatalf("Open(%s) = %T", url, c)
			}
			_ = c.Close()
			if p := redisconn.PipelineBufferSize; got != [4]int{want, want, p, p} {
				t.Errorf("Open(%s) with buffer size %d: read, write, pipeline read, pipeline write = %v, want %v",
					url, size, got, [4]int{want, want, p, p})
			}
		}
	}
}

// A URL's own pipeline buffer sizes are kept.
func TestPipelineBufferSizesFromTheURL(t *testing.T) {
	c, err := redisconn.Open("redis://127.0.0.1:6379/0?pipeline_read_buffer_size=65536&pipeline_write_buffer_size=131072")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	o := c.(*redis.Client).Options()
	if o.PipelineReadBufferSize != 65536 || o.PipelineWriteBufferSize != 131072 {
		t.Errorf("pipeline buffers %d, %d; want the URL's 65536, 131072", o.PipelineReadBufferSize, o.PipelineWriteBufferSize)
	}
}
