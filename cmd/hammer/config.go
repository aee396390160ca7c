package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/reservation"
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
)

// scenario is what the run hammers.
type scenario string

const (
	// scenarioHotSeat: one seat, booked before the clock starts; every
	// request must be refused.
	scenarioHotSeat scenario = "hot-seat"
	// scenarioFreshSeats: every request books a seat nobody asked for.
	scenarioFreshSeats scenario = "fresh-seats"
	// scenarioContended: K seats, each raced by its share of the requests;
	// exactly one wins each.
	scenarioContended scenario = "contended"
	// scenarioBestAvailable: best-available holds of random quantities on
	// a fresh venue layout until it is sold out, then explicit-seat holds
	// of the same quantities on another (best.go).
	scenarioBestAvailable scenario = "best-available"
	// scenarioSeatMap: clients read a schedule's seat map, half of them
	// revalidating, while bookings may go on (seatmap_scenario.go).
	scenarioSeatMap scenario = "seat-map"
	// scenarioOnSale: a crowd joins a schedule's waiting room around its
	// opening, is admitted at a rate, and buys best-available seats
	// (onsale.go).
	scenarioOnSale scenario = "on-sale"
)

// Defaults of -scenario best-available: make compare's venue of 2,000
// seats, 40 rows of 50, and parties of one to six.
const (
	defaultRows      = 40
	defaultRowSeats  = 50
	defaultQuantity  = "1-6"
	defaultPhaseTime = 2 * time.Minute
	// defaultReadTime is how long -scenario seat-map reads by default.
	defaultReadTime = 10 * time.Second
	// maxBookRate bounds -book-rate.
	maxBookRate = 100_000
)

// Defaults and bounds of -scenario on-sale: 50 admissions a second, the
// crowd joining over 10 s, 30% of it before the opening (the pre-queue).
// The bounds of the rate and the cap are the service's (waitroom).
const (
	defaultAdmitRate     = 50
	maxAdmitRate         = 10_000
	maxActiveCap         = 1_000_000
	defaultJoinWindow    = 10 * time.Second
	defaultPrequeueShare = 0.3
	// onSaleSlack is what the default -duration of an on-sale leaves
	// beyond the joining and the admissions the rate promises: the
	// buyers' last polls, holds, confirmations and leaving.
	onSaleSlack = time.Minute
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
}

// onSaleConfig is what -scenario on-sale sells and how: a fresh venue and
// best-available requests as best-available's (bestConfig), behind a
// queue admitting AdmitRate buyers a second (at most MaxActive at once
// when positive); the users join over JoinWindow, PrequeueShare of the
// window before the opening.
type onSaleConfig struct {
	bestConfig
	AdmitRate     int           `json:"admitRate"`
	MaxActive     int           `json:"maxActive,omitempty"`
	JoinWindow    time.Duration `json:"joinWindowNs"`
	PrequeueShare float64       `json:"prequeueShare"`
}

// seatMapConfig is what -scenario seat-map reads: a fresh venue
// (venueConfig; unless -schedule names an existing schedule), its seat map
// in Form, while BookRate bookings a second go on.
type seatMapConfig struct {
	venueConfig
	Form     string  `json:"form"`
	BookRate float64 `json:"bookRate"`
	// Revalidating is how many of the clients send If-None-Match (-1:
	// half of them).
	Revalidating int `json:"revalidating"`
}

// usageSynopsis opens -h's text (main.go's doc says more).
const usageSynopsis = `Usage:
  hammer [-scenario hot-seat|fresh-seats|contended] [-n 1000 | -duration 10s]
         [-c 64] [-users U] [-url http://127.0.0.1:8080[,...]]
         [-seats K [-per-seat M]] [-schedule ID -seat N]
         [-watch [-streams S] [-watch-url URL] [-form full|compact]]
         [-secret S] [-timeout 15s] [-json] [-verify=false] [-allow-unavailable]
  hammer -scenario best-available [-rows 40 -row-seats 50 [-sections N] | -layout FILE]
         [-quantity 1-6] [-category C] [-adjacent=false] [-seed 1] [-duration 2m]
         [-watch [-streams S] [-form full|compact]] [-database-url URL]
         [-c 64] [-users U] [-url ...] [-json]
  hammer -scenario seat-map [-schedule ID | -rows 40 -row-seats 50 [-sections N] | -layout FILE]
         [-form compact|full] [-book-rate R] [-duration 10s] [-c 64] [-users U] [-url ...] [-json]
  hammer -scenario on-sale [-rows 40 -row-seats 50 [-sections N] | -layout FILE] [-quantity 1-6]
         [-admit-rate 50] [-max-active N] [-join-window 10s] [-prequeue-share 0.3]
         [-users U] [-duration D] [-c 64] [-url ...] [-json]

  The 80,000-seat stadium sold to parties of 1-6:
    hammer -scenario best-available -sections 100 -rows 20 -row-seats 40 -quantity 1-6 -users 2000 -c 64
  Its seat map read by 64 clients while 200 bookings a second go on:
    hammer -scenario seat-map -sections 100 -rows 20 -row-seats 40 -c 64 -book-rate 200 -duration 30s
  Its on-sale: 20,000 buyers join its waiting room over a minute, admitted 500 a second:
    hammer -scenario on-sale -sections 100 -rows 20 -row-seats 40 -users 20000 -join-window 1m -admit-rate 500

Flags:
`

// venueConfig is the venue a scenario makes: Rows rows of RowSeats seats
// (of Category, when given); with Sections, that many sections of such
// rows; or the layout of LayoutFile.
type venueConfig struct {
	Rows       int    `json:"rows,omitempty"`
	RowSeats   int    `json:"rowSeats,omitempty"`
	Sections   int    `json:"sections,omitempty"`
	LayoutFile string `json:"layoutFile,omitempty"`
	Category   string `json:"category,omitempty"`
	file       *layoutIn
}

// layout is what POST /schedules is sent as the venue's layout.
func (v venueConfig) layout() layoutIn {
	if v.file != nil {
		return *v.file
	}
	return gridLayout(v.Sections, v.Rows, v.RowSeats, v.Category)
}

// capacity is the layout's number of seats.
func (v venueConfig) capacity() int {
	if v.file == nil {
		return max(v.Sections, 1) * v.Rows * v.RowSeats
	}
	n := 0
	for _, r := range v.file.Rows {
		n += r.Seats
	}
	for _, s := range v.file.Sections {
		for _, r := range s.Rows {
			n += r.Seats
		}
	}
	return n
}

// describe says what the venue is, for the text report.
func (v venueConfig) describe() string {
	switch {
	case v.file != nil:
		l := v.layout()
		shape := fmt.Sprintf("%d rows", l.rowCount())
		if l.sectioned() {
			shape = fmt.Sprintf("%d sections, %s", len(l.Sections), shape)
		}
		return fmt.Sprintf("layout %s: %s, %d seats%s", v.LayoutFile, shape, v.capacity(), categoryNote(v.Category))
	case v.Sections > 0:
		return fmt.Sprintf("%d sections × %d rows × %d seats = %d seats%s", v.Sections, v.Rows, v.RowSeats, v.capacity(), categoryNote(v.Category))
	}
	return fmt.Sprintf("%d rows × %d seats = %d seats%s", v.Rows, v.RowSeats, v.capacity(), categoryNote(v.Category))
}

// bestConfig is what -scenario best-available hammers: a fresh venue
// (venueConfig; the category, when given, is asked for by every request),
// and requests for a quantity drawn from MinQuantity..MaxQuantity by a
// generator seeded with Seed. With -duration, Duration bounds each phase
// instead of defaultPhaseTime.
type bestConfig struct {
	venueConfig
	MinQuantity int    `json:"minQuantity"`
	MaxQuantity int    `json:"maxQuantity"`
	Adjacent    bool   `json:"adjacent"`
	Seed        uint64 `json:"seed"`
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
	fs.Usage = func() {
		_, _ = fmt.Fprint(fs.Output(), usageSynopsis)
		fs.PrintDefaults()
	}
	env := envDefaults{getenv: getenv}

	scen := fs.String("scenario", env.str("HAMMER_SCENARIO", string(scenarioContended)),
		"hot-seat, fresh-seats, contended, best-available, seat-map or on-sale (env HAMMER_SCENARIO)")
	n := fs.Int("n", env.int("HAMMER_N", 0), "total requests; default 1000, or -seats x -per-seat (env HAMMER_N)")
	dur := fs.Duration("duration", env.duration("HAMMER_DURATION", 0),
		"run this long instead of -n requests; best-available: the most each phase may last, default "+defaultPhaseTime.String()+
			"; seat-map: how long to read, default "+defaultReadTime.String()+
			"; on-sale: the most the sale may last from the first join, default -join-window + twice -users ÷ -admit-rate + "+
			onSaleSlack.String()+" (env HAMMER_DURATION)")
	c := fs.Int("c", env.int("HAMMER_C", 64),
		"concurrent workers, one connection each; on-sale: the connections per target the buyers share (env HAMMER_C)")
	users := fs.Int("users", env.int("HAMMER_USERS", 0),
		"distinct users (tokens); default one per worker, at least 100; on-sale: the buyers, each joining the queue once (env HAMMER_USERS)")
	urls := fs.String("url", env.str("HAMMER_URL", defaultURL(getenv)),
		"API base URLs, comma-separated; requests go round-robin (env HAMMER_URL, else http://$HTTP_ADDR)")
	seats := fs.Int("seats", env.int("HAMMER_SEATS", 1), "contended: seats to race for, 1.."+strconv.Itoa(maxSeats)+" (env HAMMER_SEATS)")
	perSeat := fs.Int("per-seat", env.int("HAMMER_PER_SEAT", 0), "contended: requests per seat, sets -n (env HAMMER_PER_SEAT)")
	schedule := fs.Int64("schedule", int64(env.int("HAMMER_SCHEDULE", 0)),
		"hot-seat or contended: an existing schedule (with -seat) instead of a fresh one; seat-map: the existing schedule to read (env HAMMER_SCHEDULE)")
	seat := fs.Int("seat", env.int("HAMMER_SEAT", 0), "the seat of -schedule (env HAMMER_SEAT)")
	secret := fs.String("secret", getenv("AUTH_SECRET"), "HS256 secret for minting tokens (env AUTH_SECRET)")
	timeout := fs.Duration("timeout", env.duration("HAMMER_TIMEOUT", 15*time.Second), "per-request timeout (env HAMMER_TIMEOUT)")
	asJSON := fs.Bool("json", env.bool("HAMMER_JSON", false), "print the report as JSON (env HAMMER_JSON)")
	verify := fs.Bool("verify", env.bool("HAMMER_VERIFY", true),
		"check the seat map before and after; false for targets without one (env HAMMER_VERIFY)")
	allowUnavailable := fs.Bool("allow-unavailable", env.bool("HAMMER_ALLOW_UNAVAILABLE", false),
		"hot-seat, fresh-seats and contended: 503 unavailable answers to the bookings (a database failing over) do not fail the verdict: "+
			"they are counted, and a seat refused so need not be won; any other 5xx or transport error still fails, and the run must book again "+
			"after its last 503 (env HAMMER_ALLOW_UNAVAILABLE)")
	cpuProfile := fs.String("cpuprofile", "", "write the hammer's own CPU profile to this file")
	client := fs.String("client", env.str("HAMMER_CLIENT", clientFast),
		"HTTP client: fasthttp (cheapest per request) or nethttp (Go's net/http) (env HAMMER_CLIENT)")
	watch := fs.Bool("watch", env.bool("HAMMER_WATCH", false),
		"follow the live seat map while hammering; report each booking's event delay and any event that never came (env HAMMER_WATCH)")
	streams := fs.Int("streams", env.int("HAMMER_STREAMS", 0),
		"open this many more live seat-map clients per hammered schedule on the -watch-url instance, reading only (env HAMMER_STREAMS)")
	form := fs.String("form", env.str("HAMMER_FORM", ""),
		"the seat map's form the -watch and -streams clients ask their streams for, full (an object a seat; their default) or compact "+
			"(a character a seat); seat-map: the form its clients read, default compact (env HAMMER_FORM)")
	bookRate := fs.Float64("book-rate", env.float("HAMMER_BOOK_RATE", 0),
		"seat-map: bookings a second (POST /reservations of the venue's seats in turn) while the clients read; 0: none (env HAMMER_BOOK_RATE)")
	revalidating := fs.Int("revalidating", env.int("HAMMER_REVALIDATING", -1),
		"seat-map: how many of the -c clients revalidate with If-None-Match (the rest read plainly); default half (env HAMMER_REVALIDATING)")
	watchURL := fs.String("watch-url", env.str("HAMMER_WATCH_URL", ""),
		"the instance whose stream -watch follows; default the last -url (env HAMMER_WATCH_URL)")
	rows := fs.Int("rows", env.int("HAMMER_ROWS", defaultRows),
		"best-available, seat-map and on-sale: rows of the fresh layout, of each section with -sections, 1.."+strconv.Itoa(reservation.MaxRows)+" (env HAMMER_ROWS)")
	rowSeats := fs.Int("row-seats", env.int("HAMMER_ROW_SEATS", defaultRowSeats),
		"best-available, seat-map and on-sale: seats in each row; "+strconv.Itoa(maxSeats)+" seats at most in a layout of rows alone (env HAMMER_ROW_SEATS)")
	sections := fs.Int("sections", env.int("HAMMER_SECTIONS", 0),
		fmt.Sprintf("best-available, seat-map and on-sale: lay the venue out in this many sections (named 101, 102, ...), each of -rows rows of -row-seats seats, "+
			"1..%d, %d seats at most in all; 0: rows alone (env HAMMER_SECTIONS)", reservation.MaxSections, reservation.MaxSeatCount))
	layoutFile := fs.String("layout", env.str("HAMMER_LAYOUT", ""),
		"best-available, seat-map and on-sale: the venue's layout from this JSON file, what POST /schedules's \"layout\" takes ({\"rows\": [...]} or {\"sections\": [...]}), "+
			"instead of -rows, -row-seats and -sections (env HAMMER_LAYOUT)")
	quantity := fs.String("quantity", env.str("HAMMER_QUANTITY", defaultQuantity),
		"best-available and on-sale: seats each request asks for, N or MIN-MAX within 1..10, drawn at random; "+
			"on-sale: a buyer refused not_enough_seats asks for fewer, down to 1 (env HAMMER_QUANTITY)")
	category := fs.String("category", env.str("HAMMER_CATEGORY", ""),
		"best-available, seat-map and on-sale: the category of the layout's rows, asked for by every best-available request; default none asked (rows standard) (env HAMMER_CATEGORY)")
	adjacent := fs.Bool("adjacent", env.bool("HAMMER_ADJACENT", true),
		"best-available and on-sale: ask for consecutive seats of one row (env HAMMER_ADJACENT)")
	databaseURL := fs.String("database-url", env.str("HAMMER_DATABASE_URL", ""),
		"best-available: the service's PostgreSQL database (its DATABASE_URL), to report the rows it read per hold (pg_stat_database; "+
			"adds some 45 s to the run); default none: the figure is left out (env HAMMER_DATABASE_URL)")
	seed := fs.Uint64("seed", env.uint64("HAMMER_SEED", 1),
		"best-available and on-sale: seed of the quantities and of the explicit phase's blocks (env HAMMER_SEED)")
	admitRate := fs.Int("admit-rate", env.int("HAMMER_ADMIT_RATE", defaultAdmitRate),
		fmt.Sprintf("on-sale: the queue's admitPerSecond, buyers admitted a second, 1..%d (env HAMMER_ADMIT_RATE)", maxAdmitRate))
	maxActive := fs.Int("max-active", env.int("HAMMER_MAX_ACTIVE", 0),
		fmt.Sprintf("on-sale: the queue's maxActive, the most buyers admitted at once, 1..%d; 0: no cap (env HAMMER_MAX_ACTIVE)", maxActiveCap))
	joinWindow := fs.Duration("join-window", env.duration("HAMMER_JOIN_WINDOW", defaultJoinWindow),
		"on-sale: the -users join the queue over this long, evenly spread (env HAMMER_JOIN_WINDOW)")
	prequeueShare := fs.Float64("prequeue-share", env.float("HAMMER_PREQUEUE_SHARE", defaultPrequeueShare),
		"on-sale: the share of -join-window before the queue opens: that share of the users joins the pre-queue, shuffled at the opening, 0..1 (env HAMMER_PREQUEUE_SHARE)")

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

	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg := config{
		Scenario: scenario(*scen), N: *n, Duration: *dur, C: *c, Users: *users, Seats: *seats,
		ScheduleID: *schedule, Seat: *seat, Secret: []byte(*secret), Timeout: *timeout, JSON: *asJSON, Verify: *verify,
		CPUProfile: *cpuProfile, Client: *client, Watch: *watch, WatchURL: strings.TrimRight(*watchURL, "/"), Streams: *streams,
		AllowUnavailable: *allowUnavailable,
	}
	bad := func(format string, a ...any) (config, error) { return config{}, usagef(format, a...) }
	switch cfg.Scenario {
	case scenarioHotSeat, scenarioFreshSeats, scenarioContended:
	case scenarioBestAvailable:
		v, err := parseVenue(*rows, *rowSeats, *sections, *layoutFile, *category, set)
		if err != nil {
			return config{}, err
		}
		best, err := parseBest(v, *quantity, *adjacent, *seed)
		if err != nil {
			return config{}, err
		}
		cfg.Best = best
		cfg.DatabaseURL = *databaseURL
	case scenarioSeatMap:
		sm := seatMapConfig{Form: cmp.Or(*form, formCompact), BookRate: *bookRate, Revalidating: *revalidating}
		if cfg.ScheduleID == 0 {
			v, err := parseVenue(*rows, *rowSeats, *sections, *layoutFile, *category, set)
			if err != nil {
				return config{}, err
			}
			sm.venueConfig = v
		}
		cfg.SeatMap = sm
	case scenarioOnSale:
		v, err := parseVenue(*rows, *rowSeats, *sections, *layoutFile, *category, set)
		if err != nil {
			return config{}, err
		}
		best, err := parseBest(v, *quantity, *adjacent, *seed)
		if err != nil {
			return config{}, err
		}
		cfg.OnSale = onSaleConfig{bestConfig: best, AdmitRate: *admitRate, MaxActive: *maxActive, JoinWindow: *joinWindow, PrequeueShare: *prequeueShare}
	default:
		return bad("-scenario must be hot-seat, fresh-seats, contended, best-available, seat-map or on-sale")
	}
	if err := checkScenarioFlags(cfg.Scenario, set); err != nil {
		return config{}, err
	}
	cfg.Form = cmp.Or(*form, formFull)
	if *perSeat < 0 {
		return bad("-per-seat must be positive")
	}
	if *perSeat > 0 {
		switch {
		case cfg.Scenario != scenarioContended:
			return bad("-per-seat is for -scenario contended")
		case cfg.N > 0:
			return bad("-per-seat and -n exclude each other")
		}
		cfg.N = *perSeat * cfg.Seats
	}
	switch {
	case cfg.N > 0 && cfg.Duration > 0:
		return bad("-n and -duration exclude each other")
	case cfg.Scenario == scenarioSeatMap:
		switch {
		case cfg.N > 0:
			return bad("-n is not for seat-map: it reads for -duration")
		case cfg.Seats != 1 || cfg.Seat != 0:
			return bad("-seats and -seat are not for seat-map: it reads a whole seat map (-schedule, or a venue of its own)")
		case *watch || *streams != 0:
			return bad("-watch and -streams are not for seat-map")
		case cfg.ScheduleID != 0 && (set["rows"] || set["row-seats"] || set["sections"] || set["layout"] || set["category"]):
			return bad("-schedule reads an existing schedule: not with -rows, -row-seats, -sections, -layout or -category")
		case cfg.SeatMap.Form != formFull && cfg.SeatMap.Form != formCompact:
			return bad("-form must be %s or %s", formFull, formCompact)
		case cfg.SeatMap.BookRate < 0 || cfg.SeatMap.BookRate > maxBookRate:
			return bad("-book-rate must be 0..%d", maxBookRate)
		case cfg.SeatMap.Revalidating > cfg.C || cfg.SeatMap.Revalidating < -1:
			return bad("-revalidating must be 0..-c (%d)", cfg.C)
		case cfg.Duration == 0:
			cfg.Duration = defaultReadTime
		}
	case cfg.Scenario == scenarioOnSale:
		o := cfg.OnSale
		switch {
		case cfg.N > 0:
			return bad("-n is not for on-sale: every user joins once (-users)")
		case cfg.Seats != 1 || cfg.ScheduleID != 0 || cfg.Seat != 0:
			return bad("-seats, -schedule and -seat are not for on-sale: it makes its own venue (-rows, -row-seats, -sections, -layout)")
		case *watch || *streams != 0:
			return bad("-watch and -streams are not for on-sale")
		case o.AdmitRate < 1 || o.AdmitRate > maxAdmitRate:
			return bad("-admit-rate must be 1..%d", maxAdmitRate)
		case o.MaxActive < 0 || o.MaxActive > maxActiveCap:
			return bad("-max-active must be 0..%d", maxActiveCap)
		case o.JoinWindow <= 0 || o.JoinWindow > maxDuration:
			return bad("-join-window must be positive and at most %s", maxDuration)
		case !(o.PrequeueShare >= 0 && o.PrequeueShare <= 1):
			return bad("-prequeue-share must be 0..1")
		}
	case cfg.Scenario == scenarioBestAvailable:
		switch {
		case cfg.N > 0:
			return bad("-n is not for best-available: each phase runs until its venue is sold out (-duration bounds it)")
		case cfg.Seats != 1 || cfg.ScheduleID != 0 || cfg.Seat != 0:
			return bad("-seats, -schedule and -seat are not for best-available: it makes its own layouts (-rows, -row-seats, -sections, -layout)")
		case cfg.Duration == 0:
			cfg.Duration = defaultPhaseTime
		}
	case cfg.N == 0 && cfg.Duration == 0:
		cfg.N = 1000
	}
	switch {
	case cfg.N < 0 || cfg.N > maxRequests:
		return bad("-n must be 1..%d", maxRequests)
	case cfg.Duration < 0 || cfg.Duration > maxDuration:
		return bad("-duration must be positive and at most %s", maxDuration)
	case cfg.C < 1 || cfg.C > maxWorkers:
		return bad("-c must be 1..%d", maxWorkers)
	case cfg.Users < 0 || cfg.Users > maxUsers:
		return bad("-users must be 0..%d", maxUsers)
	case cfg.Seats < 1 || cfg.Seats > maxSeats:
		return bad("-seats must be 1..%d", maxSeats)
	case cfg.Seats > 1 && cfg.Scenario != scenarioContended:
		return bad("-seats is for -scenario contended")
	case cfg.ScheduleID < 0:
		return bad("-schedule must be positive")
	case cfg.Seat < 0:
		return bad("-seat must be positive")
	case (cfg.ScheduleID > 0) != (cfg.Seat > 0) && cfg.Scenario != scenarioSeatMap:
		return bad("-schedule and -seat go together")
	case cfg.Seat > 0 && cfg.Scenario == scenarioFreshSeats:
		return bad("-schedule/-seat hammer one seat: not for fresh-seats")
	case cfg.Seat > 0 && cfg.Seats != 1:
		return bad("-seat and -seats > 1 exclude each other")
	case cfg.Timeout <= 0:
		return bad("-timeout must be positive")
	case cfg.Client != clientFast && cfg.Client != clientStd:
		return bad("-client must be %s or %s", clientFast, clientStd)
	case len(cfg.Secret) == 0:
		return bad("-secret or AUTH_SECRET is required")
	case len(cfg.Secret) < auth.MinSecretLen:
		return bad("-secret must be at least %d bytes", auth.MinSecretLen)
	}
	if cfg.N > 0 {
		cfg.C = min(cfg.C, cfg.N)
		if cfg.Scenario == scenarioContended && cfg.N < cfg.Seats {
			return bad("-n (%d) must be at least the number of seats (%d)", cfg.N, cfg.Seats)
		}
	}
	if cfg.Users == 0 {
		// Spread over enough users that the service's per-user rate
		// limit (RATE_LIMIT_USER, 1000 a second by default) does not
		// throttle a run of tens of thousands of requests a second.
		cfg.Users = max(cfg.C, defaultUsers)
		if cfg.Scenario == scenarioBestAvailable {
			// Holds stay live to the end of the run, and a user may
			// have MAX_HOLDS_PER_USER (20 by default) of them: at most
			// 10 per user in each of the two phases, even when every
			// hold is of the least quantity.
			cfg.Users = max(cfg.Users, (cfg.Best.capacity()/cfg.Best.MinQuantity+9)/10)
		}
	}

	if cfg.Scenario == scenarioOnSale && cfg.Duration == 0 {
		// Time for everybody to join, for the rate to admit them all
		// twice over, and for the last ones to buy and leave.
		o := cfg.OnSale
		cfg.Duration = min(o.JoinWindow+2*time.Duration(float64(cfg.Users)/float64(o.AdmitRate)*float64(time.Second))+onSaleSlack, maxDuration)
	}

	targets, err := parseTargets(*urls)
	if err != nil {
		return config{}, usagef("-url: %w", err)
	}
	cfg.Targets = targets
	if cfg.Streams < 0 || cfg.Streams > 100_000 {
		return bad("-streams must be 0..100000")
	}
	if cfg.Streams > 0 {
		cfg.Watch = true
	}
	switch {
	case cfg.Form != formFull && cfg.Form != formCompact:
		return bad("-form must be %s or %s", formFull, formCompact)
	case set["form"] && !cfg.Watch && cfg.Scenario != scenarioSeatMap:
		return bad("-form is for the live seat map's clients (-watch or -streams) and -scenario seat-map")
	}
	if cfg.Watch {
		if cfg.Scenario == scenarioHotSeat {
			return bad("-watch needs bookings to watch: use contended, fresh-seats or best-available")
		}
		if cfg.WatchURL == "" {
			cfg.WatchURL = targets[len(targets)-1]
		}
	}
	return cfg, nil
}

// scenarioFlags names the flags that only some scenarios read, and which.
var scenarioFlags = map[string][]scenario{
	"rows": {scenarioBestAvailable, scenarioSeatMap, scenarioOnSale}, "row-seats": {scenarioBestAvailable, scenarioSeatMap, scenarioOnSale},
	"sections": {scenarioBestAvailable, scenarioSeatMap, scenarioOnSale}, "layout": {scenarioBestAvailable, scenarioSeatMap, scenarioOnSale},
	"category": {scenarioBestAvailable, scenarioSeatMap, scenarioOnSale},
	"quantity": {scenarioBestAvailable, scenarioOnSale}, "adjacent": {scenarioBestAvailable, scenarioOnSale},
	"seed":       {scenarioBestAvailable, scenarioOnSale},
	"admit-rate": {scenarioOnSale}, "max-active": {scenarioOnSale}, "join-window": {scenarioOnSale}, "prequeue-share": {scenarioOnSale},
	"database-url":      {scenarioBestAvailable},
	"book-rate":         {scenarioSeatMap},
	"revalidating":      {scenarioSeatMap},
	"allow-unavailable": {scenarioHotSeat, scenarioFreshSeats, scenarioContended},
}

// checkScenarioFlags refuses the flags of set that s does not read,
// naming the scenarios that do: "-quantity: for -scenario best-available".
func checkScenarioFlags(s scenario, set map[string]bool) error {
	var misplaced []string
	var byScenarios []string // the same order: whom each group is for
	groups := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		readers, ok := scenarioFlags[name]
		if !ok || slices.Contains(readers, s) {
			continue
		}
		names := make([]string, len(readers))
		for i, sc := range readers {
			names[i] = string(sc)
		}
		whom := names[len(names)-1]
		if len(names) > 1 {
			whom = strings.Join(names[:len(names)-1], ", ") + " or " + whom
		}
		if groups[whom] == nil {
			byScenarios = append(byScenarios, whom)
		}
		groups[whom] = append(groups[whom], "-"+name)
	}
	for _, whom := range byScenarios {
		misplaced = append(misplaced, strings.Join(groups[whom], ", ")+": for -scenario "+whom)
	}
	if len(misplaced) > 0 {
		return usagef("%s", strings.Join(misplaced, "; "))
	}
	return nil
}

// parseVenue checks the venue's flags: a grid of rows (-rows × -row-seats,
// at most maxSeats seats, as the halls the hammer makes), of sections of
// such rows (-sections: the API's limits, reservation.MaxSections
// sections of reservation.MaxRows rows, reservation.MaxSeatCount seats in
// all), or a layout file (-layout, which excludes the others), and a
// -category the layout has. set names the flags given on the command line.
func parseVenue(rows, rowSeats, sections int, file, category string, set map[string]bool) (venueConfig, error) {
	v := venueConfig{Rows: rows, RowSeats: rowSeats, Sections: sections, Category: category}
	if file != "" {
		if set["rows"] || set["row-seats"] || set["sections"] {
			return v, usagef("-layout excludes -rows, -row-seats and -sections")
		}
		l, err := readLayoutFile(file)
		if err != nil {
			return v, usagef("-layout %s: %v", file, err)
		}
		checked, err := l.check()
		if err != nil {
			return v, usagef("-layout %s: %v", file, err)
		}
		if category != "" && !checked.HasCategory(category) {
			return v, usagef("-category %q: the layout of %s has no row of that category", category, file)
		}
		return venueConfig{LayoutFile: file, Category: category, file: &l}, nil
	}
	switch {
	case sections < 0 || sections > reservation.MaxSections:
		return v, usagef("-sections must be 0..%d", reservation.MaxSections)
	case rows < 1 || rows > reservation.MaxRows:
		return v, usagef("-rows must be 1..%d", reservation.MaxRows)
	case sections == 0 && (rowSeats < 1 || rowSeats > maxSeats):
		return v, usagef("-row-seats must be 1..%d", maxSeats)
	case rowSeats < 1 || rowSeats > reservation.MaxSeatCount:
		return v, usagef("-row-seats must be 1..%d", reservation.MaxSeatCount)
	case sections == 0 && rows*rowSeats > maxSeats:
		return v, usagef("-rows × -row-seats must be at most %d seats, not %d (lay a larger venue out in -sections)", maxSeats, rows*rowSeats)
	case sections*rows*rowSeats > reservation.MaxSeatCount:
		return v, usagef("-sections × -rows × -row-seats must be at most %d seats, not %d", reservation.MaxSeatCount, sections*rows*rowSeats)
	}
	if _, err := v.layout().check(); err != nil {
		return v, usagef("-category %q: %v", category, err)
	}
	return v, nil
}

// longestRow is the most seats a row of the venue has (of category, when
// not "").
func (v venueConfig) longestRow(category string) int {
	l := v.layout()
	longest := 0
	consider := func(sectionCategory string, rows []layoutRowIn) {
		for _, r := range rows {
			if c := cmp.Or(r.Category, sectionCategory, reservation.DefaultCategory); category == "" || c == category {
				longest = max(longest, r.Seats)
			}
		}
	}
	consider("", l.Rows)
	for _, s := range l.Sections {
		consider(s.Category, s.Rows)
	}
	return longest
}

// parseBest checks best-available's requests: a quantity range within
// 1..10 that an adjacent hold can have in one row of the venue v.
func parseBest(v venueConfig, quantity string, adjacent bool, seed uint64) (bestConfig, error) {
	b := bestConfig{venueConfig: v, Adjacent: adjacent, Seed: seed}
	lo, hi, ok := strings.Cut(quantity, "-")
	if !ok {
		hi = lo
	}
	var errLo, errHi error
	b.MinQuantity, errLo = strconv.Atoi(strings.TrimSpace(lo))
	b.MaxQuantity, errHi = strconv.Atoi(strings.TrimSpace(hi))
	switch longest := v.longestRow(v.Category); {
	case errLo != nil || errHi != nil || b.MinQuantity < 1 || b.MaxQuantity > reservation.MaxHoldSeats || b.MinQuantity > b.MaxQuantity:
		return b, usagef("-quantity must be N or MIN-MAX with 1 <= MIN <= MAX <= %d, not %q", reservation.MaxHoldSeats, quantity)
	case adjacent && b.MaxQuantity > longest && v.file == nil:
		return b, usagef("-quantity: %d adjacent seats do not fit in a row of %d (-row-seats)", b.MaxQuantity, longest)
	case adjacent && b.MaxQuantity > longest:
		return b, usagef("-quantity: %d adjacent seats do not fit in the longest row of %s%s (%d seats)",
			b.MaxQuantity, v.LayoutFile, categoryNote(v.Category), longest)
	}
	return b, nil
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

func (e *envDefaults) uint64(name string, def uint64) uint64 {
	e.lookup(name, func(v string) (err error) { def, err = strconv.ParseUint(v, 10, 64); return err })
	return def
}

func (e *envDefaults) float(name string, def float64) float64 {
	e.lookup(name, func(v string) (err error) { def, err = strconv.ParseFloat(v, 64); return err })
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
