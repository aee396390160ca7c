// Command measure runs the service's measuring runs on `make run`'s Redis
// and PostgreSQL (started if need be), each judged in Go or by benchstat:
//
//	measure compare   the service against the shared baseline (make compare)
//	measure pairs     builds or settings side by side (make pairs)
//	measure sustain   fresh seats at full speed on a new database (make sustain)
//	measure soak      a real crowd for a few minutes against one instance (make soak)
//
// It runs from the repository's root (`go run ./cmd/measure compare`), and
// takes its settings from the environment, each subcommand's named in its
// file (ROUNDS, DURATION, USERS, SCENARIOS...).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// subcommands are measure's runs by name.
var subcommands = map[string]func(ctx context.Context, root string) error{
	"compare": compare,
	"pairs":   pairs,
	"sustain": sustain,
	"soak":    soak,
}

// errFailed is a run whose verdict failed: it has said why already.
var errFailed = errors.New("failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	if len(args) != 1 || subcommands[args[0]] == nil {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/measure compare|pairs|sustain|soak (settings from the environment)")
		return 2
	}
	name := args[0]
	root, err := os.Getwd()
	if err == nil {
		if _, statErr := os.Stat(filepath.Join(root, "cmd", "api")); statErr != nil {
			err = fmt.Errorf("run it from the repository's root (no cmd/api in %s)", root)
		}
	}
	if err == nil {
		err = subcommands[name](ctx, root)
	}
	switch {
	case err == nil:
		return 0
	case !errors.Is(err, errFailed):
		logf(name, "%v", err)
	}
	return 1
}

// logf prints a line of the run's progress, or why it stopped, on stderr.
func logf(run, format string, a ...any) {
	fmt.Fprintf(os.Stderr, run+": "+format+"\n", a...)
}
