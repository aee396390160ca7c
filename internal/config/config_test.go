package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
)

const secret = "0123456789abcdef0123456789abcdef"

func valid() map[string]string {
	return map[string]string{
		"DATABASE_URL": "postgres://u:p@127.0.0.1:5432/db",
		"REDIS_URL":    "redis://127.0.0.1:6379/0",
		"AUTH_SECRET":  secret,
	}
}

func TestLoadDefaults(t *testing.T) {
	cfg, err := config.Load(valid())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.HTTPAddr != "127.0.0.1:8080" || cfg.LockTTL != 5*time.Second || cfg.LockMaxWait != 10*time.Second ||
		cfg.HoldTTL != 10*time.Minute || cfg.SeatChangesMaxBacklog != 1_000_000 || cfg.SeatRelayInterval != 15*time.Millisecond ||
		cfg.SeatImagesMaxMiB != 64 {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestLoadOverrides(t *testing.T) {
	env := valid()
	env["HTTP_ADDR"] = ":9000"
	env["LOCK_TTL"] = "750ms"
	env["LOCK_MAX_WAIT"] = "2s"
	env["HOLD_TTL"] = "90s"
	env["SEAT_CHANGES_MAX_BACKLOG"] = "5000"
	env["SEAT_RELAY_INTERVAL"] = "50ms"
	env["SEAT_IMAGES_MAX_MIB"] = "256"
	cfg, err := config.Load(env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.HTTPAddr != ":9000" || cfg.LockTTL != 750*time.Millisecond || cfg.LockMaxWait != 2*time.Second ||
		cfg.HoldTTL != 90*time.Second || cfg.SeatChangesMaxBacklog != 5000 || cfg.SeatRelayInterval != 50*time.Millisecond ||
		cfg.SeatImagesMaxMiB != 256 {
		t.Errorf("cfg = %+v", cfg)
	}
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"missing database", "DATABASE_URL", "", "DATABASE_URL"},
		{"missing redis", "REDIS_URL", "", "REDIS_URL is required with LOCK_BACKEND=redis"},
		{"missing secret", "AUTH_SECRET", "", "AUTH_SECRET"},
		{"short secret", "AUTH_SECRET", "short-secret", "AUTH_SECRET must be at least 32 bytes"},
		{"bad ttl", "LOCK_TTL", "five seconds", "LOCK_TTL"},
		{"tiny ttl", "LOCK_TTL", "1ms", "LOCK_TTL must be between"},
		{"negative wait", "LOCK_MAX_WAIT", "-1s", "LOCK_MAX_WAIT must be between"},
		{"unknown backend", "LOCK_BACKEND", "zookeeper", "LOCK_BACKEND must be"},
		{"short hold", "HOLD_TTL", "9s", "HOLD_TTL must be between 10s and 1h0m0s"},
		{"long hold", "HOLD_TTL", "61m", "HOLD_TTL must be between"},
		{"bad hold", "HOLD_TTL", "ten minutes", "HOLD_TTL"},
		{"small backlog bound", "SEAT_CHANGES_MAX_BACKLOG", "999", "SEAT_CHANGES_MAX_BACKLOG must be between"},
		{"bad backlog bound", "SEAT_CHANGES_MAX_BACKLOG", "many", "SEAT_CHANGES_MAX_BACKLOG"},
		{"slow relay", "SEAT_RELAY_INTERVAL", "2s", "SEAT_RELAY_INTERVAL must be between"},
		{"no seat images", "SEAT_IMAGES_MAX_MIB", "0", "SEAT_IMAGES_MAX_MIB must be between 1 and 1048576"},
		{"huge seat images", "SEAT_IMAGES_MAX_MIB", "1048577", "SEAT_IMAGES_MAX_MIB must be between"},
		{"bad seat images", "SEAT_IMAGES_MAX_MIB", "64MiB", "SEAT_IMAGES_MAX_MIB: invalid value"},
		{"sentinel without master", "REDIS_URL", "redis+sentinel://app:short-secret@s1:26379,s2:26379", "REDIS_URL is invalid: no Sentinel master name"},
		{"sentinel without hosts", "REDIS_URL", "redis+sentinel://app:short-secret@/mymaster", "REDIS_URL is invalid: empty Sentinel address"},
		{"sentinel bad port", "REDIS_URL", "redis+sentinel://app:short-secret@s1:26379,s2:99999/mymaster", "REDIS_URL is invalid: invalid port in Sentinel address"},
		{"sentinel bad db", "REDIS_URL", "redis+sentinel://s1/mymaster/x", "REDIS_URL is invalid: invalid database number"},
		{"redis bad db", "REDIS_URL", "redis://app:short-secret@cache:6379/x", "REDIS_URL is invalid"},
		{"redis no scheme", "REDIS_URL", "app:short-secret@cache:6379", "REDIS_URL is invalid: Redis URL has no scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := valid()
			if tt.value == "" {
				delete(env, tt.key)
			} else {
				env[tt.key] = tt.value
			}
			_, err := config.Load(env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load: got %v, want an error mentioning %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "short-secret") {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestLoadSecretAlone(t *testing.T) {
	if _, err := config.LoadSecret(map[string]string{"AUTH_SECRET": secret}); err != nil {
		t.Errorf("LoadSecret: %v", err)
	}
	if _, err := config.LoadSecret(map[string]string{}); err == nil {
		t.Error("LoadSecret without AUTH_SECRET: want an error")
	}
}

func TestPostgresBackendNeedsNoRedis(t *testing.T) {
	env := valid()
	delete(env, "REDIS_URL")
	env["LOCK_BACKEND"] = "postgres"
	cfg, err := config.Load(env)
	if err != nil || cfg.LockBackend != config.BackendPostgres {
		t.Fatalf("Load: %+v, %v", cfg, err)
	}
	if cfg, _ := config.Load(valid()); cfg.LockBackend != config.BackendRedis {
		t.Errorf("default LOCK_BACKEND = %q, want redis", cfg.LockBackend)
	}
}

func TestLoadSentinelURL(t *testing.T) {
	env := valid()
	env["REDIS_URL"] = "redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster/0"
	cfg, err := config.Load(env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.RedisURL != env["REDIS_URL"] {
		t.Errorf("RedisURL = %q", cfg.RedisURL)
	}
}

// The relay waits for one replica behind Sentinel, for none elsewhere,
// unless SEAT_FEED_REPLICAS says otherwise; a Redis Cluster cannot wait.
func TestSeatFeedReplicas(t *testing.T) {
	sentinel := "redis+sentinel://10.0.0.1,10.0.0.2,10.0.0.3/mymaster/0"
	cluster := "redis+cluster://10.0.0.1:7000,10.0.0.2:7000"
	for _, tc := range []struct {
		url, replicas string
		want          int
		problem       string
	}{
		{url: "redis://127.0.0.1:6379/0", want: 0},
		{url: sentinel, want: 1},
		{url: cluster, want: 0},
		{url: sentinel, replicas: "0", want: 0},
		{url: sentinel, replicas: "2", want: 2},
		{url: "redis://127.0.0.1:6379/0", replicas: "1", want: 1},
		{url: sentinel, replicas: "-1", problem: "SEAT_FEED_REPLICAS must be between 0 and 16"},
		{url: sentinel, replicas: "17", problem: "SEAT_FEED_REPLICAS must be between 0 and 16"},
		{url: cluster, replicas: "1", problem: "SEAT_FEED_REPLICAS must be 0 with a Redis Cluster REDIS_URL"},
	} {
		env := valid()
		env["REDIS_URL"] = tc.url
		if tc.replicas != "" {
			env["SEAT_FEED_REPLICAS"] = tc.replicas
		}
		cfg, err := config.Load(env)
		switch {
		case tc.problem != "":
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("%s, SEAT_FEED_REPLICAS=%q: error %v; want %q", tc.url, tc.replicas, err, tc.problem)
			}
		case err != nil:
			t.Errorf("%s, SEAT_FEED_REPLICAS=%q: %v", tc.url, tc.replicas, err)
		case cfg.SeatFeedReplicas != tc.want:
			t.Errorf("%s, SEAT_FEED_REPLICAS=%q: %d; want %d", tc.url, tc.replicas, cfg.SeatFeedReplicas, tc.want)
		}
	}
}

// The error about REDIS_URL names the variable and what is wrong, never the
// URL: no host, no password.
func TestLoadRedisURLErrorHidesTheURL(t *testing.T) {
	env := valid()
	env["REDIS_URL"] = "redis+sentinel://app:hunter2@sentinel-host:26379"
	_, err := config.Load(env)
	if err == nil {
		t.Fatal("Load accepted a Sentinel URL without a master name")
	}
	for _, part := range []string{"hunter2", "sentinel-host", "app:"} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("error %q contains %q", err, part)
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	got, err := config.ParseProxies(" 127.0.0.1, 10.0.0.0/8 ,2001:db8::/32,")
	if err != nil || len(got) != 3 || got[0].String() != "127.0.0.1/32" || got[1].String() != "10.0.0.0/8" || got[2].String() != "2001:db8::/32" {
		t.Errorf("ParseProxies = %v, %v", got, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "localhost", "10.0.0.1/8x"} {
		if _, err := config.ParseProxies(bad); err == nil {
			t.Errorf("ParseProxies(%q) took it", bad)
		}
	}
}

func TestLoadTrustedProxies(t *testing.T) {
	env := valid()
	env["TRUSTED_PROXIES"] = "127.0.0.1,10.0.0.0/8"
	cfg, err := config.Load(env)
	if err != nil || len(cfg.TrustedProxies) != 2 {
		t.Fatalf("Load: %v, %v", cfg.TrustedProxies, err)
	}
	env["TRUSTED_PROXIES"] = "127.0.0.1,proxy.internal"
	if _, err := config.Load(env); err == nil || !strings.Contains(err.Error(), "TRUSTED_PROXIES") {
		t.Errorf("Load with a bad TRUSTED_PROXIES: %v", err)
	}
	if cfg, err := config.Load(valid()); err != nil || cfg.TrustedProxies != nil {
		t.Errorf("unset: %v, %v; want none", cfg.TrustedProxies, err)
	}
}
