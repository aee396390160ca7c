package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// Bounds that keep one run finite and its memory small: every request gets a
// pre-minted token and a result slot, so n is capped.
const (
	maxRequests = 1_000_000
	maxWorkers  = 10_000
	maxSeats    = 2000 // the API's own seatCount limit
)

// config is one run, fully validated.
type config struct {
	Targets    []string // API base URLs without trailing slash
	N          int
	C          int // already clamped to N
	ScheduleID int64
	Seats      []int // the seat ids to hammer
	NewSeats   int   // > 0: create a schedule with this many seats first
	Secret     []byte
	Timeout    time.Duration
	JSON       bool
}

// usageError is a bad flag or environment value: exit status 2.
type usageError struct {
	err      error
	reported bool // the flag package already printed it with the usage text
}

func (e *usageError) Error() string { return e.err.Error() }

func usagef(format string, a ...any) error { return &usageError{err: fmt.Errorf(format, a...)} }

// parseConfig reads flags, falling back to environment variables for
// defaults. It returns flag.ErrHelp for -h and a *usageError for anything
// invalid.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("hammer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := envDefaults{getenv: getenv}

	n := fs.Int("n", env.int("HAMMER_N", 1000), "total reservation requests (env HAMMER_N)")
	c := fs.Int("c", env.int("HAMMER_C", 100), "concurrent workers (env HAMMER_C)")
	urls := fs.String("url", env.str("HAMMER_URL", "http://127.0.0.1:8080"),
		"API base URLs, comma-separated; requests go round-robin (env HAMMER_URL)")
	schedule := fs.Int64("schedule", int64(env.int("HAMMER_SCHEDULE", 0)),
		"existing schedule to hammer; 0 creates a fresh one (env HAMMER_SCHEDULE)")
	seat := fs.Int("seat", env.int("HAMMER_SEAT", 0), "single seat of -schedule to hammer (env HAMMER_SEAT)")
	seats := fs.Int("seats", env.int("HAMMER_SEATS", 1), "hammer seats 1..seats, requests spread evenly (env HAMMER_SEATS)")
	secret := fs.String("secret", getenv("AUTH_SECRET"), "HS256 secret for minting tokens (env AUTH_SECRET)")
	timeout := fs.Duration("timeout", env.duration("HAMMER_TIMEOUT", 15*time.Second), "per-request timeout (env HAMMER_TIMEOUT)")
	asJSON := fs.Bool("json", env.bool("HAMMER_JSON", false), "print the report as JSON (env HAMMER_JSON)")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		return config{}, &usageError{err: err, reported: true}
	}
	if env.err != nil {
		return config{}, &usageError{err: env.err}
	}
	if fs.NArg() > 0 {
		return config{}, usagef("unexpected arguments %q", fs.Args())
	}

	cfg := config{N: *n, C: *c, ScheduleID: *schedule, Secret: []byte(*secret), Timeout: *timeout, JSON: *asJSON}
	bad := func(format string, a ...any) (config, error) { return config{}, usagef(format, a...) }
	switch {
	case cfg.N < 1 || cfg.N > maxRequests:
		return bad("-n must be 1..%d", maxRequests)
	case cfg.C < 1 || cfg.C > maxWorkers:
		return bad("-c must be 1..%d", maxWorkers)
	case *seats < 1 || *seats > maxSeats:
		return bad("-seats must be 1..%d", maxSeats)
	case *schedule < 0:
		return bad("-schedule must be positive")
	case *seat < 0:
		return bad("-seat must be positive")
	case *seat > 0 && *schedule == 0:
		return bad("-seat needs -schedule")
	case *seat > 0 && *seats != 1:
		return bad("-seat and -seats > 1 exclude each other")
	case cfg.Timeout <= 0:
		return bad("-timeout must be positive")
	case len(cfg.Secret) == 0:
		return bad("-secret or AUTH_SECRET is required")
	case len(cfg.Secret) < auth.MinSecretLen:
		return bad("-secret must be at least %d bytes", auth.MinSecretLen)
	}
	cfg.C = min(cfg.C, cfg.N)

	if *seat > 0 {
		cfg.Seats = []int{*seat}
	} else {
		for s := 1; s <= *seats; s++ {
			cfg.Seats = append(cfg.Seats, s)
		}
	}
	if *schedule == 0 {
		cfg.NewSeats = *seats
	}
	if cfg.N < len(cfg.Seats) {
		return bad("-n (%d) must be at least the number of seats (%d)", cfg.N, len(cfg.Seats))
	}

	targets, err := parseTargets(*urls)
	if err != nil {
		return config{}, usagef("-url: %w", err)
	}
	cfg.Targets = targets
	return cfg, nil
}

func parseTargets(list string) ([]string, error) {
	var targets []string
	for raw := range strings.SplitSeq(list, ",") {
		raw = strings.TrimSpace(raw)
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%q is not an http(s) base URL", raw)
		}
		targets = append(targets, strings.TrimRight(u.String(), "/"))
	}
	return targets, nil
}

// envDefaults turns environment variables into flag defaults, remembering
// the first unparsable one so it is reported like a bad flag.
type envDefaults struct {
	getenv func(string) string
	err    error
}

func (e *envDefaults) lookup(name string, parse func(string) error) {
	v := e.getenv(name)
	if v == "" {
		return
	}
	if err := parse(v); err != nil && e.err == nil {
		e.err = fmt.Errorf("%s=%q: %w", name, v, err)
	}
}

func (e *envDefaults) str(name, def string) string {
	e.lookup(name, func(v string) error { def = v; return nil })
	return def
}

func (e *envDefaults) int(name string, def int) int {
	e.lookup(name, func(v string) (err error) { def, err = strconv.Atoi(v); return err })
	return def
}

func (e *envDefaults) bool(name string, def bool) bool {
	e.lookup(name, func(v string) (err error) { def, err = strconv.ParseBool(v); return err })
	return def
}

func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	e.lookup(name, func(v string) (err error) { def, err = time.ParseDuration(v); return err })
	return def
}
