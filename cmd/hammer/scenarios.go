package main

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// scenarioDef is one scenario as -scenario chooses it: what -h says of
// it, and its own flags (define adds their checks).
type scenarioDef struct {
	name   scenario
	about  string
	define func(f *flags)
}

// Defaults and bounds of the scenarios' own flags.
const (
	// defaultPhaseTime bounds each phase of best-available.
	defaultPhaseTime = 2 * time.Minute
	// defaultReadTime is how long seat-map reads.
	defaultReadTime = 10 * time.Second
	maxBookRate     = 100_000
	// on-sale: 50 admissions a second, the crowd joining over 10 s, 30%
	// of it before the opening (the pre-queue). The bounds of the rate and
	// the cap are the service's (waitroom).
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

// scenarioList names the scenarios for -h and its errors.
const scenarioList = "hot-seat, fresh-seats, contended, best-available, seat-map, on-sale, on-sales or platform"

// scenarios are the scenarios, in scenarioList's order.
var scenarios = []scenarioDef{
	{scenarioHotSeat, "One seat, booked before the clock starts (or -schedule's -seat), asked for by every request:\n" +
		"every answer must refuse it.", defineHotSeat},
	{scenarioFreshSeats, "Every request books a seat nobody asked for, in schedules made as the run needs them:\n" +
		"every one must be won.", defineFreshSeats},
	{scenarioContended, "The default: -seats seats of a fresh schedule, each raced by its share of the requests: exactly\n" +
		"one must win each.", defineContended},
	{scenarioBestAvailable, "Best-available holds of random quantities on a fresh venue until it is sold out, then explicit-seat\n" +
		"holds of the same quantities on another. The 80,000-seat stadium sold to parties of 1-6:\n" +
		"  hammer -scenario best-available -sections 100 -rows 20 -row-seats 40 -quantity 1-6 -users 2000 -c 64", defineBestAvailable},
	{scenarioSeatMap, "-c clients read a schedule's seat map, half of them revalidating, while -book-rate bookings a second\n" +
		"go on. The stadium's, read by 64 clients while 200 bookings a second go on:\n" +
		"  hammer -scenario seat-map -sections 100 -rows 20 -row-seats 40 -c 64 -book-rate 200 -duration 30s", defineSeatMap},
	{scenarioOnSale, "A crowd joins a fresh venue's waiting room around its opening, is admitted at a rate, and buys\n" +
		"best-available seats. The stadium's: 20,000 buyers join over a minute, admitted 500 a second:\n" +
		"  hammer -scenario on-sale -sections 100 -rows 20 -row-seats 40 -users 20000 -join-window 1m -admit-rate 500", defineOnSale},
	{scenarioOnSales, "-schedules on-sales at once, each on-sale's on a fresh venue of its own, behind its own queue, to its own -users\n" +
		"buyers; with -idle-queues more queues open and empty; the CPU of Redis and of the service a second. The\n" +
		"platform's: 40 halls of 500 seats, 250 buyers each in parties of 1-4 joining over 10 s, admitted 5 a second:\n" +
		"  hammer -scenario on-sales -schedules 40 -rows 10 -row-seats 50 -users 250 -quantity 1-4 -admit-rate 5\n" +
		"What 1,000 idle queues cost, measured for 20 s:\n" +
		"  hammer -scenario on-sales -schedules 0 -idle-queues 1000 -duration 20s -redis-url $REDIS_URL -pid-files '.data/run/cluster/api-*.pid'",
		defineOnSales},
	{scenarioPlatform, "A platform on one service: -schedules schedules, -stadiums of them stadiums each followed by a watcher, the\n" +
		"rest small halls, -queues of them with a queue open and empty (-ids-file keeps them for the next run). Compact\n" +
		"seat maps are read at -read-rate, half the run of one stadium, half of them all and the halls, while the\n" +
		"service's resident memory is read every second. The platform's: 10,000 schedules, 100 stadiums, 1,000 queues:\n" +
		"  hammer -scenario platform -ids-file .data/platform-ids.json -pid-files '.data/run/api/*.pid'", definePlatform},
}

func defineHotSeat(f *flags) {
	f.booking()
	f.existingSeat()
}

func defineFreshSeats(f *flags) {
	f.booking()
	f.watching()
}

func defineContended(f *flags) {
	cfg := f.cfg
	f.IntVar(&cfg.Seats, "seats", 1, fmt.Sprintf("seats to race for, 1..%d", maxSeats))
	perSeat := f.Int("per-seat", 0, "requests per seat: -n is -seats × -per-seat")
	f.check(func() error {
		switch {
		case cfg.Seats < 1 || cfg.Seats > maxSeats:
			return usagef("-seats must be 1..%d", maxSeats)
		case *perSeat < 0:
			return usagef("-per-seat must be positive")
		case *perSeat > 0 && cfg.N > 0:
			return usagef("-per-seat and -n exclude each other")
		case *perSeat > 0:
			cfg.N = *perSeat * cfg.Seats
		}
		return nil
	})
	f.booking()
	f.existingSeat()
	f.check(func() error {
		switch {
		case cfg.N > 0 && cfg.N < cfg.Seats:
			return usagef("-n (%d) must be at least the number of seats (%d)", cfg.N, cfg.Seats)
		case cfg.Seat > 0 && cfg.Seats != 1:
			return usagef("-seat and -seats > 1 exclude each other")
		}
		return nil
	})
	f.watching()
}

// booking defines the flags of the scenarios that book seats (hot-seat,
// fresh-seats, contended): -n requests (1000 by default) or -duration.
func (f *flags) booking() {
	cfg := f.cfg
	f.DurationVar(&cfg.Duration, "duration", 0, "run this long instead of -n requests")
	f.IntVar(&cfg.N, "n", 0, "total requests; default 1000 (contended: -seats × -per-seat)")
	f.BoolVar(&cfg.Verify, "verify", true, "check the seat map before and after, and read every booking back; false for targets without one")
	f.BoolVar(&cfg.AllowUnavailable, "allow-unavailable", false,
		"503 unavailable answers to the bookings (a database failing over) do not fail the verdict: they are counted, and a seat refused so "+
			"need not be won; any other 5xx or transport error still fails, and the run must book again after its last 503")
	f.check(func() error {
		switch {
		case cfg.N > 0 && cfg.Duration > 0:
			return usagef("-n and -duration exclude each other")
		case cfg.N < 0 || cfg.N > maxRequests:
			return usagef("-n must be 1..%d", maxRequests)
		case cfg.N == 0 && cfg.Duration == 0:
			cfg.N = 1000
		}
		if cfg.N > 0 {
			cfg.C = min(cfg.C, cfg.N)
		}
		cfg.defaultUsers(0)
		return nil
	})
	f.webhooks()
}

// existingSeat defines -schedule and -seat: one seat that exists already
// (hot-seat, contended).
func (f *flags) existingSeat() {
	cfg := f.cfg
	f.Int64Var(&cfg.ScheduleID, "schedule", 0, "an existing schedule (with -seat) instead of a fresh one")
	f.IntVar(&cfg.Seat, "seat", 0, "the seat of -schedule to hammer")
	f.check(func() error {
		switch {
		case cfg.ScheduleID < 0:
			return usagef("-schedule must be positive")
		case cfg.Seat < 0:
			return usagef("-seat must be positive")
		case (cfg.ScheduleID > 0) != (cfg.Seat > 0):
			return usagef("-schedule and -seat go together")
		}
		return nil
	})
}

// watching defines the flags of the live seat map's clients
// (fresh-seats, contended, best-available).
func (f *flags) watching() {
	cfg := f.cfg
	f.BoolVar(&cfg.Watch, "watch", false, "follow the live seat map while hammering; report each booking's event delay and any event that never came")
	f.IntVar(&cfg.Streams, "streams", 0, "open this many more live seat-map clients per hammered schedule on the -watch-url instance, reading only; sets -watch")
	f.StringVar(&cfg.WatchURL, "watch-url", "", "the instance whose stream -watch follows; default the last -url")
	f.StringVar(&cfg.Form, "form", formFull, "the seat map's form the -watch and -streams clients ask for, full (an object a seat) or compact (a character a seat)")
	f.check(func() error {
		switch {
		case cfg.Streams < 0 || cfg.Streams > maxStreams:
			return usagef("-streams must be 0..%d", maxStreams)
		case cfg.Form != formFull && cfg.Form != formCompact:
			return usagef("-form must be %s or %s", formFull, formCompact)
		case f.given["form"] && !cfg.Watch && cfg.Streams == 0:
			return usagef("-form is for the live seat map's clients (-watch or -streams)")
		}
		cfg.Watch = cfg.Watch || cfg.Streams > 0
		if cfg.Watch {
			cfg.WatchURL = cmp.Or(strings.TrimRight(cfg.WatchURL, "/"), cfg.Targets[len(cfg.Targets)-1])
		}
		return nil
	})
}

func defineBestAvailable(f *flags) {
	cfg := f.cfg
	f.DurationVar(&cfg.Duration, "duration", defaultPhaseTime, "the most each phase may last")
	f.best(&cfg.Best)
	f.StringVar(&cfg.DatabaseURL, "database-url", "",
		"the service's PostgreSQL database (its DATABASE_URL), to report the rows it read per hold (pg_stat_database; "+
			"adds some 45 s to the run); default none: the figure is left out")
	f.watching()
	f.check(func() error {
		// Holds stay live to the end of the run, and a user may have
		// MAX_HOLDS_PER_USER (20 by default) of them: at most 10 per user
		// in each of the two phases, even when every hold is of the least
		// quantity.
		cfg.defaultUsers((cfg.Best.capacity()/cfg.Best.MinQuantity + 9) / 10)
		cfg.Duration = cmp.Or(cfg.Duration, defaultPhaseTime) // -duration 0 is the default, as it always was
		return nil
	})
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

func defineSeatMap(f *flags) {
	cfg, sm := f.cfg, &f.cfg.SeatMap
	f.Int64Var(&cfg.ScheduleID, "schedule", 0, "an existing schedule to read instead of a fresh venue")
	f.DurationVar(&cfg.Duration, "duration", defaultReadTime, "how long the clients read")
	venue := f.venue(&sm.venueConfig)
	f.StringVar(&sm.Form, "form", formCompact, "the seat map's form the clients read, compact (a character a seat) or full (an object a seat)")
	f.Float64Var(&sm.BookRate, "book-rate", 0, "bookings a second (POST /reservations of the venue's seats in turn) while the clients read; 0: none")
	f.IntVar(&sm.Revalidating, "revalidating", -1, "how many of the -c clients revalidate with If-None-Match (the rest read plainly); -1: half")
	f.check(func() error {
		venueGiven := f.given["rows"] || f.given["row-seats"] || f.given["sections"] || f.given["layout"] || f.given["category"]
		switch {
		case cfg.ScheduleID < 0:
			return usagef("-schedule must be positive")
		case cfg.ScheduleID > 0 && venueGiven:
			return usagef("-schedule reads an existing schedule: not with -rows, -row-seats, -sections, -layout or -category")
		case sm.Form != formFull && sm.Form != formCompact:
			return usagef("-form must be %s or %s", formFull, formCompact)
		case sm.BookRate < 0 || sm.BookRate > maxBookRate:
			return usagef("-book-rate must be 0..%d", maxBookRate)
		case sm.Revalidating > cfg.C || sm.Revalidating < -1:
			return usagef("-revalidating must be 0..-c (%d)", cfg.C)
		case cfg.ScheduleID == 0:
			if err := venue(); err != nil {
				return err
			}
		}
		cfg.Duration = cmp.Or(cfg.Duration, defaultReadTime) // -duration 0 is the default, as it always was
		cfg.defaultUsers(0)
		return nil
	})
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

func defineOnSale(f *flags) {
	f.DurationVar(&f.cfg.Duration, "duration", 0, "the most the sale may last from the first join; default -join-window + twice -users ÷ -admit-rate + "+onSaleSlack.String())
	f.onSale("the buyers, each joining the queue once")
	f.webhooks()
}

// onSale defines the flags of an on-sale's venue, queue and crowd
// (on-sale, on-sales), checked into cfg.OnSale; users says what -users
// counts. The -duration it defaults is the scenario's own flag.
func (f *flags) onSale(users string) {
	cfg, o := f.cfg, &f.cfg.OnSale
	f.Lookup("c").Usage = "the connections per target the buyers share"
	f.Lookup("users").Usage = fmt.Sprintf("%s; default -c, at least %d", users, defaultUsers)
	f.best(&o.bestConfig)
	f.Lookup("quantity").Usage += "; a buyer refused not_enough_seats asks for fewer, down to 1"
	f.IntVar(&o.AdmitRate, "admit-rate", defaultAdmitRate, fmt.Sprintf("the queue's admitPerSecond, buyers admitted a second, 1..%d", maxAdmitRate))
	f.IntVar(&o.MaxActive, "max-active", 0, fmt.Sprintf("the queue's maxActive, the most buyers admitted at once, 1..%d; 0: no cap", maxActiveCap))
	f.DurationVar(&o.JoinWindow, "join-window", defaultJoinWindow, "the -users join the queue over this long, evenly spread")
	f.Float64Var(&o.PrequeueShare, "prequeue-share", defaultPrequeueShare,
		"the share of -join-window before the queue opens: that share of the users joins the pre-queue, shuffled at the opening, 0..1")
	f.check(func() error {
		switch {
		case o.AdmitRate < 1 || o.AdmitRate > maxAdmitRate:
			return usagef("-admit-rate must be 1..%d", maxAdmitRate)
		case o.MaxActive < 0 || o.MaxActive > maxActiveCap:
			return usagef("-max-active must be 0..%d", maxActiveCap)
		case o.JoinWindow <= 0 || o.JoinWindow > maxDuration:
			return usagef("-join-window must be positive and at most %s", maxDuration)
		case !(o.PrequeueShare >= 0 && o.PrequeueShare <= 1):
			return usagef("-prequeue-share must be 0..1")
		}
		cfg.defaultUsers(0)
		if cfg.Duration == 0 {
			cfg.Duration = o.defaultDuration(cfg.Users)
		}
		return nil
	})
}

// defaultDuration is the most a sale to users buyers may last by default:
// time for everybody to join, for the rate to admit them all twice over,
// and for the last ones to buy and leave.
func (o onSaleConfig) defaultDuration(users int) time.Duration {
	admitAll := time.Duration(float64(users) / float64(o.AdmitRate) * float64(time.Second))
	return min(o.JoinWindow+2*admitAll+onSaleSlack, maxDuration)
}
