// Package config reads the service's settings from environment variables,
// once, at start-up (the README lists them under Configuration).
package config

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Config is everything `api serve` needs.
type Config struct {
	HTTPAddr    string        `env:"HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	DatabaseURL string        `env:"DATABASE_URL,required,notEmpty"`
	RedisURL    string        `env:"REDIS_URL"`
	AuthSecret  string        `env:"AUTH_SECRET,required,notEmpty"`
	LockTTL     time.Duration `env:"LOCK_TTL" envDefault:"5s"`
	LockMaxWait time.Duration `env:"LOCK_MAX_WAIT" envDefault:"10s"`
	// LockBackend selects the lock store: "redis" (REDIS_URL, standalone
	// or cluster) or "postgres" (the DATABASE_URL database).
	LockBackend string `env:"LOCK_BACKEND" envDefault:"redis"`
	// FastPath seals a booked seat's lock key so that every later request
	// for it is refused from the lock store alone (see docs/operations.md, Configuration).
	FastPath bool `env:"FAST_PATH" envDefault:"true"`
	// MetricsAddr, when set, serves /metrics and the Go profiler
	// (/debug/pprof/) on a listener of its own, never on HTTPAddr; the
	// public listener then no longer serves /metrics.
	MetricsAddr string `env:"METRICS_ADDR"`
	// DebugAddr is the older name of MetricsAddr, still read.
	DebugAddr string `env:"DEBUG_ADDR"`
	// RateLimitUser is how many requests a second one user may make, all
	// instances together (0: no limit).
	RateLimitUser int `env:"RATE_LIMIT_USER" envDefault:"1000"`
	// RateLimitIP is how many requests a second one client address may
	// make without a token, all instances together (0: no limit).
	RateLimitIP int `env:"RATE_LIMIT_IP" envDefault:"1000"`
	// TrustedProxiesText lists the proxies (addresses or CIDR prefixes,
	// comma-separated) whose X-Forwarded-For the per-address limit reads
	// the client's address from; TrustedProxies is it parsed.
	TrustedProxiesText string         `env:"TRUSTED_PROXIES"`
	TrustedProxies     []netip.Prefix `env:"-"`
	// MaxHoldsPerUser caps the live holds of one user.
	MaxHoldsPerUser int `env:"MAX_HOLDS_PER_USER" envDefault:"20"`
	// HoldTTL is how long a seat hold lives before it expires.
	HoldTTL time.Duration `env:"HOLD_TTL" envDefault:"10m"`
	// HoldMaxLifetime caps how long after its making a hold may live,
	// extensions included; unset, 30m (or HOLD_TTL when that is longer).
	HoldMaxLifetime time.Duration `env:"HOLD_MAX_LIFETIME"`
	// ShutdownDelay is how long, on SIGTERM, an instance keeps serving
	// while /readyz answers 503 "draining", before it stops accepting
	// connections: long enough for a load balancer's health checks to take
	// it out of rotation, so that no new request meets a closed port.
	ShutdownDelay time.Duration `env:"SHUTDOWN_DELAY" envDefault:"0s"`
	// MaxStreams caps the live seat-map streams one instance serves.
	MaxStreams int `env:"MAX_STREAMS" envDefault:"5000"`
	// BatchLanes is how many batches of lock calls, of seat events and of
	// bookings may be in flight at once, each; calls that find them all
	// busy go together in the next (0: every call alone).
	BatchLanes int `env:"BATCH_LANES" envDefault:"2"`
	// SeatChangesMaxBacklog bounds the seat_changes outbox: past it, the
	// oldest changes not yet relayed to the live seat map are dropped (0
	// in a Config built by hand: the default).
	SeatChangesMaxBacklog int64 `env:"SEAT_CHANGES_MAX_BACKLOG" envDefault:"1000000"`
	// SeatRelayInterval is how long the idle relay waits before it looks
	// for new seat changes again (0 in a Config built by hand: 15ms).
	SeatRelayInterval time.Duration `env:"SEAT_RELAY_INTERVAL" envDefault:"15ms"`
	// SeatImagesMaxMiB bounds, in MiB, the seat images one instance keeps
	// for the seat map and best available (seatmap.Config.MaxBytes).
	SeatImagesMaxMiB int `env:"SEAT_IMAGES_MAX_MIB" envDefault:"64"`
	// SeatFeedReplicas is how many Redis replicas must have a seat change
	// before the relay lets go of it (WAIT), so that a failover loses no
	// seat event; unset, 1 with a Sentinel REDIS_URL, else 0.
	SeatFeedReplicas int `env:"SEAT_FEED_REPLICAS"`
	// WebhookTimeout bounds one webhook delivery attempt, from the dial
	// to the answer read.
	WebhookTimeout time.Duration `env:"WEBHOOK_TIMEOUT" envDefault:"10s"`
	// WebhookRetryScheduleText is the wait before each retry of a webhook
	// delivery, Go durations separated by commas (webhook.DefaultSchedule);
	// WebhookRetrySchedule is it parsed.
	WebhookRetryScheduleText string           `env:"WEBHOOK_RETRY_SCHEDULE" envDefault:"5s,5m,30m,2h,5h,10h,10h"`
	WebhookRetrySchedule     webhook.Schedule `env:"-"`
	// WebhookAllowInsecure accepts http:// webhook endpoints, not only
	// https:// ones.
	WebhookAllowInsecure bool `env:"WEBHOOK_ALLOW_INSECURE" envDefault:"false"`
	// WebhookAllowPrivate lets webhook deliveries reach loopback, private
	// and link-local addresses, refused otherwise (SSRF).
	WebhookAllowPrivate bool `env:"WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// WebhookRetention is how long the delivery log keeps a finished
	// delivery, and its event.
	WebhookRetention time.Duration `env:"WEBHOOK_RETENTION" envDefault:"168h"`
	// Tracing is on when the standard OTEL_* variables ask for traces
	// (TracingRequested); the SDK reads them itself (internal/tracing).
	Tracing bool
}

// Webhook returns the settings of outgoing webhooks.
func (c Config) Webhook() webhook.Config {
	return webhook.Config{
		Timeout:       c.WebhookTimeout,
		Schedule:      c.WebhookRetrySchedule,
		AllowInsecure: c.WebhookAllowInsecure,
		AllowPrivate:  c.WebhookAllowPrivate,
	}
}

// TracingRequested reports whether environ asks for OpenTelemetry traces:
// OTEL_TRACES_EXPORTER set to anything but "none", or, without it, an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT: otlp is the
// exporter's default); never with OTEL_SDK_DISABLED=true. Without any of
// them tracing is off and costs nothing.
func TracingRequested(environ map[string]string) bool {
	if strings.EqualFold(strings.TrimSpace(environ["OTEL_SDK_DISABLED"]), "true") {
		return false
	}
	if exporter := strings.TrimSpace(environ["OTEL_TRACES_EXPORTER"]); exporter != "" {
		return exporter != "none"
	}
	return environ["OTEL_EXPORTER_OTLP_ENDPOINT"] != "" || environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != ""
}

// Lock backends.
const (
	BackendRedis    = "redis"
	BackendPostgres = "postgres"
)

// Load parses environ (as from os.Environ, "KEY=value") and checks every
// value; the error names each bad variable, never a secret's value.
func Load(environ map[string]string) (Config, error) {
	cfg, err := parse[Config](environ)
	if err != nil {
		return Config{}, err
	}
	cfg.Tracing = TracingRequested(environ)
	var problems []error
	switch cfg.LockBackend {
	case BackendRedis:
		if cfg.RedisURL == "" {
			problems = append(problems, errors.New(`REDIS_URL is required with LOCK_BACKEND=redis`))
		}
	case BackendPostgres:
	default:
		problems = append(problems, errors.New(`LOCK_BACKEND must be "redis" or "postgres"`))
	}
	if cfg.RedisURL != "" {
		if kind, err := redisconn.KindOf(cfg.RedisURL); err != nil {
			// The reason alone: the URL may carry a password.
			var bad *redisconn.URLError
			if errors.As(err, &bad) {
				err = bad.Err
			}
			problems = append(problems, fmt.Errorf("REDIS_URL is invalid: %s", strings.TrimPrefix(err.Error(), "redisconn: ")))
		} else if err := checkSeatFeedReplicas(&cfg, kind, environ); err != nil {
			problems = append(problems, err)
		}
	}
	if proxies, err := ParseProxies(cfg.TrustedProxiesText); err != nil {
		problems = append(problems, fmt.Errorf("TRUSTED_PROXIES is invalid: %w", err))
	} else {
		cfg.TrustedProxies = proxies
	}
	if len(cfg.AuthSecret) < auth.MinSecretLen {
		problems = append(problems, fmt.Errorf("AUTH_SECRET must be at least %d bytes", auth.MinSecretLen))
	}
	if cfg.LockTTL < 10*time.Millisecond || cfg.LockTTL > time.Hour {
		problems = append(problems, errors.New("LOCK_TTL must be between 10ms and 1h"))
	}
	if cfg.HoldTTL < reservation.MinHoldTTL || cfg.HoldTTL > reservation.MaxHoldTTL {
		problems = append(problems, fmt.Errorf("HOLD_TTL must be between %s and %s", reservation.MinHoldTTL, reservation.MaxHoldTTL))
	}
	if environ["HOLD_MAX_LIFETIME"] == "" {
		cfg.HoldMaxLifetime = max(reservation.DefaultHoldMaxLifetime, cfg.HoldTTL)
	}
	if cfg.HoldMaxLifetime < cfg.HoldTTL || cfg.HoldMaxLifetime > reservation.MaxHoldMaxLifetime {
		problems = append(problems, fmt.Errorf("HOLD_MAX_LIFETIME must be between HOLD_TTL (%s) and %s", cfg.HoldTTL, reservation.MaxHoldMaxLifetime))
	}
	if cfg.MaxStreams < 1 || cfg.MaxStreams > 1_000_000 {
		problems = append(problems, errors.New("MAX_STREAMS must be between 1 and 1000000"))
	}
	switch {
	case cfg.MetricsAddr == "":
		cfg.MetricsAddr = cfg.DebugAddr
	case cfg.DebugAddr != "" && cfg.DebugAddr != cfg.MetricsAddr:
		problems = append(problems, errors.New("DEBUG_ADDR is the older name of METRICS_ADDR: set one of them"))
	}
	if cfg.RateLimitUser < 0 || cfg.RateLimitUser > 1_000_000 {
		problems = append(problems, errors.New("RATE_LIMIT_USER must be between 0 (no limit) and 1000000"))
	}
	if cfg.RateLimitIP < 0 || cfg.RateLimitIP > 1_000_000 {
		problems = append(problems, errors.New("RATE_LIMIT_IP must be between 0 (no limit) and 1000000"))
	}
	if cfg.MaxHoldsPerUser < 1 || cfg.MaxHoldsPerUser > 10_000 {
		problems = append(problems, errors.New("MAX_HOLDS_PER_USER must be between 1 and 10000"))
	}
	if cfg.BatchLanes < 0 || cfg.BatchLanes > 64 {
		problems = append(problems, errors.New("BATCH_LANES must be between 0 (no batching) and 64"))
	}
	if cfg.SeatChangesMaxBacklog < 1000 || cfg.SeatChangesMaxBacklog > 1_000_000_000 {
		problems = append(problems, errors.New("SEAT_CHANGES_MAX_BACKLOG must be between 1000 and 1000000000"))
	}
	if cfg.SeatImagesMaxMiB < 1 || cfg.SeatImagesMaxMiB > 1<<20 {
		problems = append(problems, errors.New("SEAT_IMAGES_MAX_MIB must be between 1 and 1048576"))
	}
	if cfg.SeatRelayInterval < time.Millisecond || cfg.SeatRelayInterval > time.Second {
		problems = append(problems, errors.New("SEAT_RELAY_INTERVAL must be between 1ms and 1s"))
	}
	if cfg.ShutdownDelay < 0 || cfg.ShutdownDelay > time.Minute {
		problems = append(problems, errors.New("SHUTDOWN_DELAY must be between 0s and 1m"))
	}
	if cfg.LockMaxWait < 0 || cfg.LockMaxWait > time.Minute {
		problems = append(problems, errors.New("LOCK_MAX_WAIT must be between 0 and 1m"))
	}
	if cfg.WebhookRetention < time.Hour {
		problems = append(problems, errors.New("WEBHOOK_RETENTION must be at least 1h"))
	}
	if cfg.WebhookTimeout < time.Second || cfg.WebhookTimeout > 5*time.Minute {
		problems = append(problems, errors.New("WEBHOOK_TIMEOUT must be between 1s and 5m"))
	}
	if schedule, err := webhook.ParseSchedule(cfg.WebhookRetryScheduleText); err != nil {
		problems = append(problems, fmt.Errorf("WEBHOOK_RETRY_SCHEDULE is invalid: %s", strings.TrimPrefix(err.Error(), "webhook: ")))
	} else {
		cfg.WebhookRetrySchedule = schedule
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("config: %w", errors.Join(problems...))
	}
	return cfg, nil
}

// checkSeatFeedReplicas defaults SEAT_FEED_REPLICAS by the kind of
// REDIS_URL and checks it: a Redis Cluster has no one connection to WAIT
// on.
func checkSeatFeedReplicas(cfg *Config, kind redisconn.Kind, environ map[string]string) error {
	if environ["SEAT_FEED_REPLICAS"] == "" {
		if kind == redisconn.Sentinel {
			cfg.SeatFeedReplicas = 1
		}
		return nil
	}
	switch {
	case cfg.SeatFeedReplicas < 0 || cfg.SeatFeedReplicas > 16:
		return errors.New("SEAT_FEED_REPLICAS must be between 0 and 16")
	case cfg.SeatFeedReplicas > 0 && kind == redisconn.Cluster:
		return errors.New("SEAT_FEED_REPLICAS must be 0 with a Redis Cluster REDIS_URL")
	}
	return nil
}

// Secret is the part of the configuration that `api token` needs.
type Secret struct {
	AuthSecret string `env:"AUTH_SECRET,required,notEmpty"`
}

// LoadSecret reads AUTH_SECRET alone.
func LoadSecret(environ map[string]string) (Secret, error) {
	s, err := parse[Secret](environ)
	if err != nil {
		return Secret{}, err
	}
	if len(s.AuthSecret) < auth.MinSecretLen {
		return Secret{}, fmt.Errorf("config: AUTH_SECRET must be at least %d bytes", auth.MinSecretLen)
	}
	return s, nil
}

// Database is the part of the configuration that `api migrate` needs.
type Database struct {
	DatabaseURL string `env:"DATABASE_URL,required,notEmpty"`
}

// LoadDatabase reads DATABASE_URL alone.
func LoadDatabase(environ map[string]string) (Database, error) {
	return parse[Database](environ)
}

// parse reads T from environ. The library names a badly formatted value by
// its Go field; operators know the variable, so parse errors are renamed.
func parse[T any](environ map[string]string) (T, error) {
	v, err := env.ParseAsWithOptions[T](env.Options{Environment: environ})
	if err == nil {
		return v, nil
	}
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return v, fmt.Errorf("config: %w", err)
	}
	fields := reflect.TypeFor[T]()
	renamed := make([]error, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if f, ok := fields.FieldByName(pe.Name); ok {
				key, _, _ := strings.Cut(f.Tag.Get("env"), ",")
				e = fmt.Errorf("%s: invalid value: %w", key, pe.Err)
			}
		}
		renamed = append(renamed, e)
	}
	return v, fmt.Errorf("config: %w", errors.Join(renamed...))
}

// Log formats: JSON lines for machines (the default), text for a person
// at a terminal (make run sets it there).
const (
	LogJSON = "json"
	LogText = "text"
)

// Logging is the part of the configuration that every command needs
// before anything else.
type Logging struct {
	Format string `env:"LOG_FORMAT" envDefault:"json"`
}

// LoadLogging reads LOG_FORMAT alone.
func LoadLogging(environ map[string]string) (Logging, error) {
	l, err := parse[Logging](environ)
	if err != nil {
		return Logging{}, err
	}
	if l.Format != LogJSON && l.Format != LogText {
		return Logging{}, fmt.Errorf("config: LOG_FORMAT must be %q or %q", LogJSON, LogText)
	}
	return l, nil
}

// ParseProxies reads TRUSTED_PROXIES: addresses ("10.0.0.1") or prefixes
// ("10.0.0.0/8"), separated by commas; "" is none.
func ParseProxies(text string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or a prefix", item)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or a prefix", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
