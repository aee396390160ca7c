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
		cfg.HoldTTL != 10*time.Minute || cfg.SeatChangesMaxBacklog != 1_000_000 || cfg.SeatRelayInterval != 15*time.Millisecond {
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
	cfg, err := config.Load(env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.HTTPAddr != ":9000" || cfg.LockTTL != 750*time.Millisecond || cfg.LockMaxWait != 2*time.Second ||
		cfg.HoldTTL != 90*time.Second || cfg.SeatChangesMaxBacklog != 5000 || cfg.SeatRelayInterval != 50*time.Millisecond {
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
