package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Unset, the WEBHOOK_* variables give webhook.DefaultConfig: the defaults
// have one meaning, written twice (here as struct tags).
func TestWebhookDefaults(t *testing.T) {
	cfg, err := config.Load(valid())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got, want := cfg.Webhook(), webhook.DefaultConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("Webhook() = %+v, want webhook.DefaultConfig() = %+v", got, want)
	}
	if cfg.WebhookRetention != webhook.DefaultRetention {
		t.Errorf("WebhookRetention = %v, want webhook.DefaultRetention = %v", cfg.WebhookRetention, webhook.DefaultRetention)
	}
}

func TestWebhookSettings(t *testing.T) {
	env := valid()
	env["WEBHOOK_TIMEOUT"] = "2s"
	env["WEBHOOK_RETRY_SCHEDULE"] = "1s, 1m"
	env["WEBHOOK_ALLOW_INSECURE"] = "true"
	env["WEBHOOK_ALLOW_PRIVATE"] = "true"
	env["WEBHOOK_RETENTION"] = "72h"
	cfg, err := config.Load(env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.WebhookRetention != 72*time.Hour {
		t.Errorf("WebhookRetention = %v, want 72h", cfg.WebhookRetention)
	}
	want := webhook.Config{Timeout: 2 * time.Second, Schedule: webhook.Schedule{time.Second, time.Minute}, AllowInsecure: true, AllowPrivate: true}
	if got := cfg.Webhook(); !reflect.DeepEqual(got, want) {
		t.Errorf("Webhook() = %+v, want %+v", got, want)
	}
}

func TestWebhookRejects(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"WEBHOOK_TIMEOUT", "500ms", "WEBHOOK_TIMEOUT must be between 1s and 5m"},
		{"WEBHOOK_TIMEOUT", "6m", "WEBHOOK_TIMEOUT must be between"},
		{"WEBHOOK_TIMEOUT", "ten seconds", "WEBHOOK_TIMEOUT: invalid value"},
		{"WEBHOOK_RETRY_SCHEDULE", "5s,,5m", "WEBHOOK_RETRY_SCHEDULE is invalid: retry schedule: delay 2 is empty"},
		{"WEBHOOK_RETRY_SCHEDULE", "5s,0s", `WEBHOOK_RETRY_SCHEDULE is invalid: retry schedule: delay 2, "0s", must be above zero`},
		{"WEBHOOK_RETRY_SCHEDULE", "5s,soon", "WEBHOOK_RETRY_SCHEDULE is invalid"},
		{"WEBHOOK_RETRY_SCHEDULE", " ", "WEBHOOK_RETRY_SCHEDULE is invalid: retry schedule is empty"},
		{"WEBHOOK_ALLOW_INSECURE", "yes please", "WEBHOOK_ALLOW_INSECURE: invalid value"},
		{"WEBHOOK_ALLOW_PRIVATE", "maybe", "WEBHOOK_ALLOW_PRIVATE: invalid value"},
		{"WEBHOOK_RETENTION", "30m", "WEBHOOK_RETENTION must be at least 1h"},
		{"WEBHOOK_RETENTION", "a week", "WEBHOOK_RETENTION: invalid value"},
	} {
		env := valid()
		env[tc.key] = tc.value
		if _, err := config.Load(env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: Load = %v; want an error mentioning %q", tc.key, tc.value, err, tc.want)
		}
	}
}
