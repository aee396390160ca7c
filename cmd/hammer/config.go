package main

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// Bounds that keep one run finite and its memory small.
const (
	maxRequests = 1_000_000
	maxWorkers  = 10_000
	maxUsers    = 100_000
	// defaultUsers is the least number of users a run spreads over.
	defaultUsers = 100
	// maxSeats is the size of the halls the hammer makes (fresh seats
	// fill schedules of this many seats, one after the other) and the
	// most seats a contended run or a best-available layout of rows may
	// have: a hall's seat map stays small enough to verify every round.
	maxSeats    = 2000
	maxDuration = time.Hour
	maxStreams  = 100_000
)

// scenario is what the run hammers; scenarios says what each does.
type scenario string

const (
	scenarioHotSeat       scenario = "hot-seat"
	scenarioFreshSeats    scenario = "fresh-seats"
	scenarioContended     scenario = "contended"
	scenarioBestAvailable scenario = "best-available"
	scenarioSeatMap       scenario = "seat-map"
	scenarioOnSale        scenario = "on-sale"
	scenarioOnSales       scenario = "on-sales"
	scenarioPlatform      scenario = "platform"
)

// config is one run, fully validated.
type config struct {
	Scenario   scenario
	Targets    []string // API base URLs without trailing slash
	N          int      // requests; 0 in duration mode
	Duration   time.Duration
	C          int // workers (connections), at most N
	Users      int // distinct users the requests are spread over
	Seats      int // contended: how many seats
	ScheduleID int64
	Seat       int // with ScheduleID: the existing seat to hammer
	Secret     []byte
	Timeout    time.Duration
	JSON       bool
	Verify     bool   // read the seat map before and after
	CPUProfile string // write the hammer's own CPU profile here
	// Client is the HTTP client: clientFast (fasthttp, the cheapest per
	// request) or clientStd (net/http, what most Go callers use).
	Client string
	// AllowUnavailable lets 503 unavailable answers to the bookings pass
	// (the service's database failing over): they are counted, the
	// workers pause briefly as Retry-After says, and a seat refused so
	// need not be won (hot-seat, fresh-seats and contended).
	AllowUnavailable bool
	// Watch follows the hammered schedules' live seat maps on WatchURL
	// and reports how long each booking's event took to arrive.
	Watch    bool
	WatchURL string
	// Streams extra live seat-map clients per hammered schedule only read
	// their stream, as browsers would (the load a watched sale adds).
	Streams int
	// Form is the seat map's form the watchers' streams ask for
	// (formFull or formCompact).
	Form string
	// DatabaseURL is the service's database, whose statistics say how
	// many rows PostgreSQL read (best-available); "" leaves that out.
	DatabaseURL string
	// Best is -scenario best-available's venue and requests.
	Best bestConfig
	// SeatMap is -scenario seat-map's venue and bookings.
	SeatMap seatMapConfig
	// OnSale is -scenario on-sale's venue, queue and crowd.
	OnSale onSaleConfig
	// OnSales is -scenario on-sales's schedules, stadium, idle queues
	// and CPU sampling (each hall's sale is OnSale).
	OnSales onSalesConfig
	// Platform is -scenario platform's schedules, reads and processes.
	Platform platformConfig
	// Webhooks is -webhooks: local receivers of the service's webhooks
	// (hot-seat, fresh-seats, contended, on-sale).
	Webhooks webhookConfig
}

// defaultUsers gives a run without -users one user per worker, at least
// defaultUsers and least: enough that the service's per-user rate limit
// (RATE_LIMIT_USER, 1000 a second by default) does not throttle a run of
// tens of thousands of requests a second.
func (c *config) defaultUsers(least int) {
	if c.Users == 0 {
		c.Users = max(c.C, defaultUsers, least)
	}
}

// usageError is a bad flag or environment value: exit status 2.
type usageError struct {
	err      error
	reported bool // the flag package already printed it with the usage text
}

func (e *usageError) Error() string { return e.err.Error() }

func usagef(format string, a ...any) error { return &usageError{err: fmt.Errorf(format, a...)} }

// flags is one scenario's flag set, the shared flags and its own, bound
// to the config they fill, with the checks that complete it once parsed.
type flags struct {
	*flag.FlagSet
	cfg    *config
	given  map[string]bool // the flags given on the command line
	checks []func() error  // in the order they were added
}

// check adds a check to run, in turn, once the flags are parsed.
func (f *flags) check(c func() error) { f.checks = append(f.checks, c) }

// newFlags is s's flag set; getenv gives -url its default.
func newFlags(s scenarioDef, cfg *config, getenv func(string) string) *flags {
	f := &flags{FlagSet: flag.NewFlagSet("hammer", flag.ContinueOnError), cfg: cfg}
	f.shared(getenv)
	s.define(f)
	return f
}

// parseConfig reads the flags of the scenario args choose (chosenScenario)
// and, for those not given, their environment variables (fromEnv). It
// returns flag.ErrHelp for -h and a *usageError for anything invalid.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	name := chosenScenario(args, getenv)
	i := slices.IndexFunc(scenarios, func(s scenarioDef) bool { return s.name == name })
	if i < 0 {
		return config{}, usagef("-scenario must be %s, not %q", scenarioList, name)
	}
	s := scenarios[i]
	cfg := config{Seats: 1}
	f := newFlags(s, &cfg, getenv)
	// The flag package's own messages are held back: a flag that another
	// scenario takes is better said so.
	var out bytes.Buffer
	f.SetOutput(&out)
	f.Usage = func() { f.usage(s) }
	err := f.Parse(args)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		if err := misplaced(err, name); err != nil {
			return config{}, err
		}
		err = &usageError{err: err, reported: true}
	}
	if err != nil {
		_, _ = out.WriteTo(stderr)
		return config{}, err
	}
	if f.NArg() > 0 {
		return config{}, usagef("unexpected arguments %q", f.Args())
	}
	f.given = map[string]bool{}
	f.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	if err := f.fromEnv(getenv); err != nil {
		return config{}, err
	}
	for _, c := range f.checks {
		if err := c(); err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

// chosenScenario is the scenario whose flags args may hold: the last
// -scenario among them (as the flag package reads it, -scenario X,
// -scenario=X or with two dashes), else HAMMER_SCENARIO's, else
// contended.
func chosenScenario(args []string, getenv func(string) string) scenario {
	s := cmp.Or(getenv("HAMMER_SCENARIO"), string(scenarioContended))
	for i := 0; i < len(args) && args[i] != "--"; i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		switch {
		case name != "-scenario" && name != "--scenario":
		case hasValue:
			s = value
		case i+1 < len(args):
			i++
			s = args[i]
		}
	}
	return scenario(s)
}

// envName is the environment variable a flag falls back to: HAMMER_ and
// its name in capitals, - as _ (HAMMER_PER_SEAT); the service's own
// AUTH_SECRET for -secret.
func envName(flagName string) string {
	if flagName == "secret" {
		return "AUTH_SECRET"
	}
	return "HAMMER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// fromEnv sets each flag not given on the command line whose environment
// variable is set (envName); a bad value is reported as a bad flag is.
func (f *flags) fromEnv(getenv func(string) string) error {
	var err error
	f.VisitAll(func(fl *flag.Flag) {
		name := envName(fl.Name)
		if v := getenv(name); v != "" && !f.given[fl.Name] && err == nil {
			if e := f.Set(fl.Name, v); e != nil {
				err = usagef("%s=%q: %v", name, v, e)
			}
		}
	})
	return err
}

// misplaced says which scenarios take a flag that the chosen one does
// not define (err is the flag package's "not defined"); nil when none
// does.
func misplaced(err error, chosen scenario) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return nil
	}
	var takers []string
	for _, s := range scenarios {
		if newFlags(s, &config{}, func(string) string { return "" }).Lookup(name) != nil {
			takers = append(takers, string(s.name))
		}
	}
	if len(takers) == 0 {
		return nil
	}
	return usagef("-%s is for -scenario %s, not %s", name, orList(takers), chosen)
}

// usage is -h: the scenario, its flags, and where the others are.
func (f *flags) usage(s scenarioDef) {
	w := f.Output()
	_, _ = fmt.Fprintf(w, "Usage: hammer -scenario %s [flags]\n\n%s\n", s.name, s.about)
	_, _ = fmt.Fprintf(w, "\nEvery flag not given falls back to the environment: -per-seat to HAMMER_PER_SEAT, and so on;\n"+
		"-secret to AUTH_SECRET. The scenarios: %s (-scenario S -h: S's flags).\n\nFlags:\n", scenarioList)
	f.PrintDefaults()
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// shared defines the flags every scenario takes but -duration, whose
// meaning and default are each scenario's.
func (f *flags) shared(getenv func(string) string) {
	cfg := f.cfg
	f.StringVar((*string)(&cfg.Scenario), "scenario", string(scenarioContended), scenarioList)
	f.IntVar(&cfg.C, "c", 64, "concurrent workers, one connection each")
	f.IntVar(&cfg.Users, "users", 0, fmt.Sprintf("distinct users (tokens); default one per worker, at least %d", defaultUsers))
	urls := f.String("url", defaultURL(getenv), "API base URLs, comma-separated, taken round-robin (the default follows HTTP_ADDR)")
	f.Func("secret", "the HS256 `secret` the service's tokens are signed with", func(v string) error { cfg.Secret = []byte(v); return nil })
	f.DurationVar(&cfg.Timeout, "timeout", 15*time.Second, "per-request timeout")
	f.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the hammer's own CPU profile to this file")
	f.StringVar(&cfg.Client, "client", clientFast, "HTTP client: fasthttp (cheapest per request) or nethttp (Go's net/http)")
	f.check(func() (err error) {
		switch {
		case cfg.Duration < 0 || cfg.Duration > maxDuration:
			return usagef("-duration must be positive and at most %s", maxDuration)
		case cfg.C < 1 || cfg.C > maxWorkers:
			return usagef("-c must be 1..%d", maxWorkers)
		case cfg.Users < 0 || cfg.Users > maxUsers:
			return usagef("-users must be 0..%d", maxUsers)
		case cfg.Timeout <= 0:
			return usagef("-timeout must be positive")
		case cfg.Client != clientFast && cfg.Client != clientStd:
			return usagef("-client must be %s or %s", clientFast, clientStd)
		case len(cfg.Secret) == 0:
			return usagef("-secret or AUTH_SECRET is required")
		case len(cfg.Secret) < auth.MinSecretLen:
			return usagef("-secret must be at least %d bytes", auth.MinSecretLen)
		}
		if cfg.Targets, err = parseTargets(*urls); err != nil {
			return usagef("-url: %w", err)
		}
		return nil
	})
}

// defaultURL follows the service's own HTTP_ADDR.
func defaultURL(getenv func(string) string) string {
	if addr := getenv("HTTP_ADDR"); addr != "" {
		return "http://" + addr
	}
	return "http://127.0.0.1:8080"
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
