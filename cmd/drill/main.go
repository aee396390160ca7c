// Command drill proves, on a cluster of its own (three instances behind
// HAProxy, Redis with its Sentinels, PostgreSQL under Patroni), that the
// service rides out restarts and failovers under load:
//
//	drill rolling DIR        make rolling-restart: make smoke and the page
//	                         through HAProxy, then the hammer while the
//	                         instances restart, the Sentinels fail over,
//	                         Patroni switches over and the PostgreSQL leader
//	                         is SIGKILLed
//	drill pg-failovers DIR   make pg-failovers: N PostgreSQL failovers under
//	                         the hammer, a row each, then the median and worst
//
// It runs from the repository's root (go run ./cmd/drill), keeps its logs
// and the hammer's reports in DIR, and stops the cluster and deletes its
// servers' data when it ends, pass or fail. The environment tunes it; see
// rollingConfig and pgFailoversConfig, and docs/operations.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
)

const (
	exitFail  = 1
	exitUsage = 2
)

const usage = "usage: drill rolling DIR | drill pg-failovers DIR"

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is the command without os.Exit, so that deferred teardowns run
// first.
func run(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, usage)
		return exitUsage
	}
	name := args[0]
	logger := log.New(os.Stderr, name+": ", 0)
	var exercise func(context.Context, *drill) error
	switch name {
	case "rolling":
		cfg, err := rollingConfigFrom(os.Getenv)
		if err != nil {
			logger.Print(err)
			return exitUsage
		}
		exercise = cfg.run
	case "pg-failovers":
		cfg, err := pgFailoversConfigFrom(os.Getenv)
		if err != nil {
			logger.Print(err)
			return exitUsage
		}
		exercise = cfg.run
	default:
		fmt.Fprintln(os.Stderr, usage)
		return exitUsage
	}
	if _, err := os.Stat("cmd/drill"); err != nil {
		logger.Print("run it from the repository's root (go run ./cmd/drill, or make rolling-restart)")
		return exitUsage
	}
	dir, err := filepath.Abs(args[1])
	if err != nil {
		logger.Print(err)
		return exitUsage
	}

	ctx, signalled := interrupted()
	err = exercise(ctx, &drill{dir: dir, log: logger})
	if sig := signalled(); sig != 0 {
		// What a shell reports for a command a signal ended.
		return 128 + int(sig)
	}
	if err != nil {
		if !errors.Is(err, errReported) {
			logger.Print(err)
		}
		return exitFail
	}
	return 0
}

// interrupted is a context that SIGINT or SIGTERM ends, and the signal
// that ended it (0 while none has). Later signals are ignored: the drill
// is tearing its cluster down by then.
func interrupted() (context.Context, func() syscall.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	var got atomic.Int32
	go func() {
		got.Store(int32((<-signals).(syscall.Signal)))
		cancel()
	}()
	return ctx, func() syscall.Signal { return syscall.Signal(got.Load()) }
}

// drill is one run of a drill: its directory (logs, reports, the
// cluster's servers) and where its messages go.
type drill struct {
	dir string
	log *log.Logger
}

// errReported is a drill's failure whose reasons it has printed already.
var errReported = errors.New("failed (see above)")
