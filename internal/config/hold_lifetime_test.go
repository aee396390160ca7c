package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/config"
)

func TestHoldMaxLifetime(t *testing.T) {
	for _, tt := range []struct {
		name      string
		set       map[string]string
		want      time.Duration
		wantError string
	}{
		{name: "default", want: 30 * time.Minute},
		{name: "empty is the default", set: map[string]string{"HOLD_MAX_LIFETIME": ""}, want: 30 * time.Minute},
		{name: "set", set: map[string]string{"HOLD_MAX_LIFETIME": "2h"}, want: 2 * time.Hour},
		{name: "equal to HOLD_TTL", set: map[string]string{"HOLD_TTL": "5m", "HOLD_MAX_LIFETIME": "5m"}, want: 5 * time.Minute},
		// A HOLD_TTL longer than the default cap, set before the cap
		// existed, still starts: unset, the cap follows it.
		{name: "default follows a longer HOLD_TTL", set: map[string]string{"HOLD_TTL": "45m"}, want: 45 * time.Minute},
		{name: "below HOLD_TTL", set: map[string]string{"HOLD_MAX_LIFETIME": "5m"},
			wantError: "HOLD_MAX_LIFETIME must be between HOLD_TTL (10m0s) and 24h0m0s"},
		{name: "below a set HOLD_TTL", set: map[string]string{"HOLD_TTL": "45m", "HOLD_MAX_LIFETIME": "40m"},
			wantError: "HOLD_MAX_LIFETIME must be between HOLD_TTL (45m0s)"},
		{name: "zero", set: map[string]string{"HOLD_MAX_LIFETIME": "0s"}, wantError: "HOLD_MAX_LIFETIME must be between"},
		{name: "too long", set: map[string]string{"HOLD_MAX_LIFETIME": "25h"}, wantError: "HOLD_MAX_LIFETIME must be between"},
		{name: "not a duration", set: map[string]string{"HOLD_MAX_LIFETIME": "half an hour"}, wantError: "HOLD_MAX_LIFETIME"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := valid()
			for k, v := range tt.set {
				env[k] = v
			}
			cfg, err := config.Load(env)
			switch {
			case tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError)):
				t.Fatalf("Load: %v, want an error mentioning %q", err, tt.wantError)
			case tt.wantError == "" && err != nil:
				t.Fatalf("Load: %v", err)
			case tt.wantError == "" && cfg.HoldMaxLifetime != tt.want:
				t.Errorf("HoldMaxLifetime = %s, want %s", cfg.HoldMaxLifetime, tt.want)
			}
		})
	}
}
