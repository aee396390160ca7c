// Command hammer load-tests the seat-booking API with the three loads it
// must win: one booked seat hammered by everybody (-scenario hot-seat), a
// fresh seat for every request (fresh-seats), and K seats raced by M
// requests each (contended, the default); with a sale of a venue to
// parties who let the service choose their seats (best-available: best.go
// says how it runs and what it reports); and with a crowd reading a seat
// map while bookings go on (seat-map: seatmap_scenario.go); and with a
// crowd at the opening of a sale behind the waiting room (on-sale:
// onsale.go). Requests go out from -c workers (one connection each) as
// -users distinct users, round-robin over the comma-separated -url targets
// (several stateless instances can be raced against each other), for -n
// requests or for -duration.
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
// Usage: hammer [-scenario S] [flags]. Each scenario takes the shared
// flags and its own: hammer -scenario S -h lists them. Every flag not
// given falls back to an environment variable, HAMMER_ and its name in
// capitals with - as _ (HAMMER_SCENARIO, HAMMER_N, HAMMER_PER_SEAT,
// HAMMER_WATCH_URL, ...), -secret to AUTH_SECRET; -url's default follows
// HTTP_ADDR. best-available, seat-map and on-sale make a venue of their
// own (-rows rows of -row-seats seats, -sections of such rows, or the
// layout of -layout FILE); best.go, seatmap_scenario.go and onsale.go say
// how they run, what they report and what passes.
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
// -webhooks N registers N local receivers of the service's webhooks for
// the run and reports what each got of the changes answered 2xx (the
// bookings; on-sale's holds and confirmations: webhooks.go): one never
// delivered fails the verdict.
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
