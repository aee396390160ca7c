package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := parseConfig(nil, envOf(map[string]string{"AUTH_SECRET": testSecret}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Scenario != scenarioContended || cfg.N != 1000 || cfg.Duration != 0 || cfg.C != 64 || cfg.Users != 100 ||
		cfg.Timeout != 15*time.Second || cfg.JSON || !cfg.Verify || cfg.ScheduleID != 0 || cfg.Seats != 1 ||
		!slices.Equal(cfg.Targets, []string{"http://127.0.0.1:8080"}) {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = parseConfig(nil, envOf(map[string]string{"AUTH_SECRET": testSecret, "HTTP_ADDR": "127.0.0.1:9999"}), io.Discard)
	if err != nil || !slices.Equal(cfg.Targets, []string{"http://127.0.0.1:9999"}) {
		t.Errorf("with HTTP_ADDR: %+v, %v; want the target to follow it", cfg.Targets, err)
	}
}

func TestParseConfigEnvAndFlags(t *testing.T) {
	env := envOf(map[string]string{
		"AUTH_SECRET": testSecret, "HAMMER_N": "50", "HAMMER_C": "7", "HAMMER_SEATS": "4", "HAMMER_USERS": "3",
		"HAMMER_URL": "http://a:1/, https://b", "HAMMER_TIMEOUT": "3s", "HAMMER_JSON": "true", "HAMMER_VERIFY": "false",
	})
	cfg, err := parseConfig([]string{"-c", "9"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 50 || cfg.C != 9 || cfg.Users != 3 || cfg.Timeout != 3*time.Second || !cfg.JSON || cfg.Verify || cfg.Seats != 4 ||
		!slices.Equal(cfg.Targets, []string{"http://a:1", "https://b"}) {
		t.Errorf("env with -c override: %+v", cfg)
	}

	cfg, err = parseConfig([]string{"-schedule", "12", "-seat", "5", "-n", "3"}, envOf(map[string]string{"AUTH_SECRET": testSecret}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ScheduleID != 12 || cfg.Seat != 5 || cfg.C != 3 || cfg.Users != 100 {
		t.Errorf("existing seat, c clamped to n, at least 100 users: %+v", cfg)
	}

	cfg, err = parseConfig([]string{"-scenario", "contended", "-seats", "200", "-per-seat", "20"}, envOf(map[string]string{"AUTH_SECRET": testSecret}), io.Discard)
	if err != nil || cfg.N != 4000 || cfg.Seats != 200 {
		t.Errorf("200 seats x 20: %+v, %v; want n 4000", cfg, err)
	}
	cfg, err = parseConfig([]string{"-scenario", "hot-seat", "-duration", "3s"}, envOf(map[string]string{"AUTH_SECRET": testSecret}), io.Discard)
	if err != nil || cfg.N != 0 || cfg.Duration != 3*time.Second || cfg.C != 64 {
		t.Errorf("duration mode: %+v, %v", cfg, err)
	}
}

func TestParseConfigRejects(t *testing.T) {
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-n", "-1"}, nil, "-n must be"},
		{[]string{"-c", "0"}, nil, "-c must be"},
		{[]string{"-seats", "2001"}, nil, "-seats must be"},
		{[]string{"-seat", "2"}, nil, "-schedule and -seat go together"},
		{[]string{"-scenario", "lukewarm"}, nil, "-scenario must be"},
		{[]string{"-n", "5", "-duration", "1s"}, nil, "exclude each other"},
		{[]string{"-duration", "2h"}, nil, "-duration must be"},
		{[]string{"-scenario", "hot-seat", "-seats", "3"}, nil, "-seats is for"},
		{[]string{"-scenario", "fresh-seats", "-per-seat", "3"}, nil, "-per-seat is for"},
		{[]string{"-scenario", "fresh-seats", "-schedule", "1", "-seat", "1"}, nil, "-schedule is for -scenario hot-seat, contended or seat-map, not fresh-seats"},
		{[]string{"-scenario", "best-available", "-allow-unavailable"}, nil, "-allow-unavailable is for -scenario hot-seat, fresh-seats or contended, not best-available"},
		{[]string{"-per-seat", "3", "-n", "9"}, nil, "exclude each other"},
		{[]string{"-users", "-1"}, nil, "-users must be"},
		{[]string{"-schedule", "1", "-seat", "2", "-seats", "3"}, nil, "exclude each other"},
		{[]string{"-timeout", "0s"}, nil, "-timeout must be positive"},
		{[]string{"-client", "curl"}, nil, "-client must be fasthttp or nethttp"},
		{[]string{"-secret", ""}, nil, "required"},
		{[]string{"-secret", "short"}, nil, "at least 32 bytes"},
		{[]string{"-seats", "10", "-n", "5"}, nil, "at least the number of seats"},
		{[]string{"-url", "127.0.0.1:8080"}, nil, "not an http(s) base URL"},
		{[]string{"-url", "http://a,"}, nil, "not an http(s) base URL"},
		{[]string{"extra"}, nil, "unexpected arguments"},
		{[]string{"-nope"}, nil, "not defined"},
		{nil, map[string]string{"HAMMER_C": "many"}, "HAMMER_C"},
	}
	for _, tt := range tests {
		env := map[string]string{"AUTH_SECRET": testSecret}
		for k, v := range tt.env {
			env[k] = v
		}
		_, err := parseConfig(tt.args, envOf(env), io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q, %v) = %v, want a usage error containing %q", tt.args, tt.env, err, tt.want)
		}
	}
	if _, err := parseConfig([]string{"-h"}, envOf(nil), io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// The scenario is chosen as the flag package would read -scenario, the
// last one winning (make compare's fresh-new runs give -scenario twice),
// else by HAMMER_SCENARIO; its flags are the ones the rest may hold.
func TestParseConfigChoosesTheScenario(t *testing.T) {
	env := map[string]string{"AUTH_SECRET": testSecret}
	for _, tt := range []struct {
		args []string
		env  string
		want scenario
	}{
		{nil, "", scenarioContended},
		{[]string{"-scenario=hot-seat"}, "", scenarioHotSeat},
		{[]string{"--scenario", "seat-map"}, "", scenarioSeatMap},
		{[]string{"-scenario", "fresh-new", "-n", "10", "-scenario", "fresh-seats"}, "", scenarioFreshSeats},
		{[]string{"-rows", "10"}, "on-sale", scenarioOnSale},
		{[]string{"-scenario", "contended"}, "on-sale", scenarioContended},
	} {
		env["HAMMER_SCENARIO"] = tt.env
		cfg, err := parseConfig(tt.args, envOf(env), io.Discard)
		if err != nil || cfg.Scenario != tt.want {
			t.Errorf("parseConfig(%q) with HAMMER_SCENARIO=%q: %s, %v; want %s", tt.args, tt.env, cfg.Scenario, err, tt.want)
		}
	}
	var help strings.Builder
	if _, err := parseConfig([]string{"-scenario", "on-sale", "-h"}, envOf(nil), &help); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(help.String(), "hammer -scenario on-sale") || !strings.Contains(help.String(), "-admit-rate") ||
		strings.Contains(help.String(), "-per-seat int") {
		t.Errorf("-scenario on-sale -h: %v, printed\n%s\nwant on-sale's usage and flags alone", err, help.String())
	}
}

// Every HAMMER_* variable the docs name still sets its flag: each is the
// variable of a flag of some scenario.
func TestEveryEnvironmentVariableHasItsFlag(t *testing.T) {
	names := map[string]bool{}
	for _, s := range scenarios {
		newFlags(s, &config{}, envOf(nil)).VisitAll(func(f *flag.Flag) { names[envName(f.Name)] = true })
	}
	for _, v := range strings.Fields(`HAMMER_SCENARIO HAMMER_N HAMMER_DURATION HAMMER_C HAMMER_USERS HAMMER_URL
		HAMMER_SEATS HAMMER_PER_SEAT HAMMER_SCHEDULE HAMMER_SEAT AUTH_SECRET HAMMER_TIMEOUT HAMMER_JSON HAMMER_VERIFY
		HAMMER_WATCH HAMMER_STREAMS HAMMER_WATCH_URL HAMMER_FORM HAMMER_ROWS HAMMER_ROW_SEATS HAMMER_SECTIONS
		HAMMER_LAYOUT HAMMER_QUANTITY HAMMER_CATEGORY HAMMER_ADJACENT HAMMER_SEED HAMMER_DATABASE_URL
		HAMMER_BOOK_RATE HAMMER_REVALIDATING HAMMER_CLIENT HAMMER_ADMIT_RATE HAMMER_MAX_ACTIVE HAMMER_JOIN_WINDOW
		HAMMER_PREQUEUE_SHARE HAMMER_ALLOW_UNAVAILABLE`) {
		if !names[v] {
			t.Errorf("%s sets no flag", v)
		}
	}
	cfg, err := parseConfig([]string{"-scenario", "on-sale"}, envOf(map[string]string{"AUTH_SECRET": testSecret,
		"HAMMER_ADMIT_RATE": "7", "HAMMER_PREQUEUE_SHARE": "0.5", "HAMMER_JOIN_WINDOW": "3s", "HAMMER_SEATS": "9"}), io.Discard)
	if o := cfg.OnSale; err != nil || o.AdmitRate != 7 || o.PrequeueShare != 0.5 || o.JoinWindow != 3*time.Second {
		t.Errorf("on-sale from the environment: %+v, %v; want HAMMER_SEATS, contended's, ignored", o, err)
	}
}
