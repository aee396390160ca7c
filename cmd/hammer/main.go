// Command hammer load-tests the seat-booking API with the three loads it
// must win: one booked seat hammered by everybody (-scenario hot-seat), a
// fresh seat for every request (fresh-seats), and K seats raced by M
// requests each (contended, the default); with a sale of a venue to
// parties who let the service choose their seats (best-available: best.go
// says how it runs and what it reports); and with a crowd reading a seat
// map while bookings go on (seat-map: seatmap_scenario.go); and with a
// crowd at the opening of a sale behind the waiting room (on-sale:
// onsale.go). Requests go
// out from -c workers (one connection each) as -users distinct users,
// round-robin over the comma-separated -url targets (several stateless
// instances can be raced against each other), for -n requests or for
// -duration.
//
// The report shows the status/code histogram ("200", "409 seat_locked",
// "409 seat_taken", "transport error", ...), wall time, throughput, latency
// percentiles (HdrHistogram) and how the seats were won; -json prints it
// as JSON. Exit status is 0 only if every seat was won as the scenario says
// (contended: exactly once; fresh-seats: by its request; hot-seat: never,
// it is booked before the clock starts), every other answer was an expected
// 409, nothing failed with a 5xx or on the wire, and the seat map through
// every target shows the seats reserved (-verify=false skips the seat map,
// for targets that have none); 1 if the run fails that verdict or cannot be
// carried out; 2 for bad flags.
//
// Usage:
//
//	hammer [-scenario hot-seat|fresh-seats|contended] [-n 1000 | -duration 10s]
//	       [-c 64] [-users U] [-url http://127.0.0.1:8080[,...]]
//	       [-seats K [-per-seat M]] [-schedule ID -seat N]
//	       [-watch [-streams S] [-watch-url URL] [-form full|compact]]
//	       [-secret S] [-timeout 15s] [-json] [-verify=false] [-allow-unavailable]
//	hammer -scenario best-available [-rows 40 -row-seats 50 [-sections N] | -layout FILE]
//	       [-quantity 1-6] [-category C] [-adjacent=false] [-seed 1] [-duration 2m]
//	       [-watch [-streams S] [-form full|compact]] [-database-url URL]
//	       [-c 64] [-users U] [-url ...] [-json]
//	hammer -scenario seat-map [-schedule ID | -rows 40 -row-seats 50 [-sections N] | -layout FILE]
//	       [-form compact|full] [-book-rate R] [-duration 10s] [-c 64] [-users U] [-url ...] [-json]
//	hammer -scenario on-sale [-rows 40 -row-seats 50 [-sections N] | -layout FILE] [-quantity 1-6]
//	       [-admit-rate 50] [-max-active N] [-join-window 10s] [-prequeue-share 0.3]
//	       [-users U] [-duration D] [-c 64] [-url ...] [-json]
//
// A best-available venue is -rows rows of -row-seats seats (2,000 seats at
// most); with -sections N, N sections named 101, 102, ... of such rows (up
// to 500 sections of up to 100 rows, 100,000 seats in all: the 80,000-seat
// stadium is -sections 100 -rows 20 -row-seats 40); or the layout in FILE,
// a JSON file holding what POST /schedules's "layout" member takes. Its
// report adds the venue's seat map on the wire: GET
// /schedules/{id}/seats?form=compact and the full form with
// Accept-Encoding: gzip, before the sale and after it, in bytes as sent;
// and, with -database-url (the service's DATABASE_URL), the rows
// PostgreSQL read in each phase per hold (the delta of tup_returned +
// tup_fetched of the service's database in pg_stat_database; reading it
// settled adds some 45 s to the run). Without a database URL the figure
// is left out. make hammer has DATABASE_URL in its environment:
// ARGS='-scenario best-available -database-url $$DATABASE_URL'.
//
// -scenario seat-map has -c clients read GET /schedules/{id}/seats (the
// compact form, or -form full) with Accept-Encoding: gzip for -duration,
// every other one revalidating with If-None-Match (304 while nothing
// changed), from a loopback address each when the target is a loopback
// one (the service limits its public routes per client address); with
// -book-rate R, R bookings a second (POST /reservations of the seats in
// turn) go on meanwhile, or run a second hammer beside it. The schedule is
// -schedule's, or a fresh venue laid out as best-available's. It reports
// the reads a second split by 200 and 304, their p50/p99 latency and the
// bytes of a 200 on the wire, against the targets: p99 <= 20 ms with 64
// clients while bookings go on, and 304s at >= 10,000 a second.
//
// -scenario on-sale gives a fresh venue (laid out as best-available's) a
// queue admitting -admit-rate buyers a second (at most -max-active at
// once) and opening -prequeue-share of -join-window after the first join;
// -users buyers join it evenly over -join-window, follow their tickets as
// Retry-After says, and once admitted hold the best available seats (a
// quantity of -quantity, fewer when refused not_enough_seats) with the
// Admission header, confirm and leave; a sample first tries a hold
// without Admission (refused 403 admission_required) and joins twice.
// -duration bounds the sale from the first join. It reports the joins and
// their latency, 5xx, the time to admission, admissions a second per 10 s
// window, inversions of the line's order, admissions against the queue's
// count, the seats sold and the time to sell out, and the wait estimates'
// accuracy; the verdict fails any inversion, double admission, hold let
// through without admission, 5xx or buyer not served.
//
// With -verify, every booking answered 200 is also read back by its id
// (GET /reservations/{id} as its user): a booking the service
// acknowledged and then lost fails the verdict. -allow-unavailable judges
// a run through a database failover: 503 answers of code unavailable to
// the bookings pass (counted in the report; each worker pauses up to
// 500 ms as their Retry-After says, then goes on), a seat refused so need
// not be won, and the run must book again after its last one. What is
// not a booking (the schedules fresh-seats makes as it goes, the streams
// -watch opens, the reads after the run) is asked again while answered
// 503, for up to 30 s. The report gives the longest stretch of the run without a 200
// (longestGapMs): through a failover, about how long booking stopped.
//
// -watch follows the live seat map of what is hammered (contended and
// fresh-seats: each 200's "reserved" event; best-available: each seat of
// each best-available 201's "held" event) and reports the events' delay;
// -streams adds reading-only clients; -form compact has them all ask for
// the compact form (a character a seat) instead of the full one.
//
// Every flag falls back to an environment variable: HAMMER_SCENARIO,
// HAMMER_N, HAMMER_DURATION, HAMMER_C, HAMMER_USERS, HAMMER_URL (else
// http://$HTTP_ADDR), HAMMER_SEATS, HAMMER_PER_SEAT, HAMMER_SCHEDULE,
// HAMMER_SEAT, AUTH_SECRET, HAMMER_TIMEOUT, HAMMER_JSON, HAMMER_VERIFY,
// HAMMER_WATCH, HAMMER_STREAMS, HAMMER_WATCH_URL, HAMMER_FORM,
// HAMMER_ROWS, HAMMER_ROW_SEATS, HAMMER_SECTIONS, HAMMER_LAYOUT,
// HAMMER_QUANTITY, HAMMER_CATEGORY, HAMMER_ADJACENT, HAMMER_SEED,
// HAMMER_DATABASE_URL, HAMMER_BOOK_RATE, HAMMER_REVALIDATING, HAMMER_CLIENT,
// HAMMER_ADMIT_RATE, HAMMER_MAX_ACTIVE, HAMMER_JOIN_WINDOW,
// HAMMER_PREQUEUE_SHARE, HAMMER_ALLOW_UNAVAILABLE.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv, stderr)
	var usage *usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitPass
	case errors.As(err, &usage):
		if !usage.reported {
			_, _ = fmt.Fprintf(stderr, "hammer: %v (see -h)\n", usage)
		}
		return exitUsage
	case err != nil:
		_, _ = fmt.Fprintf(stderr, "hammer: %v\n", err)
		return exitUsage
	}

	if cfg.CPUProfile != "" {
		stop, err := profileCPU(cfg.CPUProfile)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "hammer: %v\n", err)
			return exitFail
		}
		defer stop()
	}
	var progressOut io.Writer
	if !cfg.JSON && isTerminal(stderr) {
		progressOut = stderr
	}
	r, err := hammer(ctx, cfg, progressOut)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "hammer: %v\n", err)
		return exitFail
	}
	write := writeText
	if cfg.JSON {
		write = writeJSON
	}
	if err := write(stdout, r); err != nil {
		_, _ = fmt.Fprintf(stderr, "hammer: write report: %v\n", err)
		return exitFail
	}
	if !r.Verdict.Pass {
		return exitFail
	}
	return exitPass
}

// isTerminal reports whether w is a terminal, where a progress bar belongs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// profileCPU profiles the hammer itself into path until stop, to see what a
// run costs the load generator.
func profileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
