// Command hammer load-tests the one thing a seat-booking API must never get
// wrong: many clients racing for the same seat. It fires -n POST
// /reservations from -c workers that start together, each request as a
// distinct user, then reads the seat map back and checks that every hammered
// seat was won exactly once.
//
// By default it creates a fresh schedule with -seats seats (admin token
// minted from AUTH_SECRET) and spreads the requests evenly over seats
// 1..seats; -schedule (and -seat) hammer existing, still available seats.
// Requests go round-robin over the comma-separated -url targets, so several
// stateless instances can be raced against each other.
//
// Usage:
//
//	hammer [-n 1000] [-c 100] [-url http://127.0.0.1:8080[,...]]
//	       [-schedule ID [-seat N] | -seats N] [-secret S] [-timeout 15s] [-json]
//
// Every flag falls back to an environment variable: HAMMER_N, HAMMER_C,
// HAMMER_URL, HAMMER_SCHEDULE, HAMMER_SEAT, HAMMER_SEATS, AUTH_SECRET,
// HAMMER_TIMEOUT, HAMMER_JSON.
//
// The report shows the status histogram ("200", "409 seat_locked", "409
// seat_taken", "transport error", ...), wall time, throughput, latency
// percentiles and the winners per seat. Exit status is 0 only if each seat
// has exactly one 200, every other answer is 409 seat_locked or seat_taken,
// and the seat map through every target shows the seats reserved; 1 if the
// run fails that verdict or cannot be carried out; 2 for bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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
			fmt.Fprintf(stderr, "hammer: %v (see -h)\n", usage)
		}
		return exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "hammer: %v\n", err)
		return exitUsage
	}

	r, err := hammer(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hammer: %v\n", err)
		return exitFail
	}
	write := writeText
	if cfg.JSON {
		write = writeJSON
	}
	if err := write(stdout, r); err != nil {
		fmt.Fprintf(stderr, "hammer: write report: %v\n", err)
		return exitFail
	}
	if !r.Verdict.Pass {
		return exitFail
	}
	return exitPass
}
