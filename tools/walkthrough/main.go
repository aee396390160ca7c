// Command walkthrough is `make walkthrough`: a newcomer's first steps,
// unattended.
//
//  1. It clones the repository (its committed HEAD) into a new mode-700
//     directory (like root's home, a place the postgres user cannot enter)
//     and starts `make run` there on a free port.
//  2. It pastes every ```sh block of README.md, then of docs/api.md,
//     docs/operations.md, docs/performance.md, docs/architecture.md and any
//     other docs/*.md (in name order), into bash, from the clone's
//     directory: each block must end well, and each `curl` must answer the
//     status its comment starts with ("# 409 ..."). Every curl of a block
//     shows its status to whoever pastes it, with its own -w (' %{http_code}\n'
//     after its body, or '%{stderr}%{http_code}\n' when its output is kept
//     or piped); a curl without -w fails the block. Skipped blocks: a block
//     that runs `make run` or `make test` (the two commands: the walkthrough
//     runs around them), and a block whose first line starts with
//     "# not in the walkthrough:" followed by the reason (say, it needs
//     `make cluster`).
//  3. It runs `make smoke`, `make token` and a short `make hammer` without
//     HTTP_ADDR: each must find that service on its port, not 8080.
//  4. It starts a second clone's `make run` on the same (taken) address: it
//     must fail and leave none of the servers it started running.
//  5. It stops the service and `make stop`s, and checks that no server it
//     started still listens; then it starts `make run` again in the
//     background and checks that `make stop` alone stops it all, API
//     included.
//
// Whatever ends it (a failed check, SIGINT, SIGTERM, SIGHUP), the clones'
// servers are stopped and the clones and their data deleted. It exits 0
// when every check passed, 1 with the reason when one failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

func main() {
	os.Exit(walk())
}

// walk runs the walkthrough and cleans up after it, and answers the exit
// status.
func walk() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped stopSignal
	stopped.cancelOnSignal(cancel)

	w, err := newWalkthrough()
	if err != nil {
		logf("%v", err)
		return 1
	}
	err = w.takeSteps(ctx)
	// A signal cancels the steps' commands: their errors are its doing.
	sig := stopped.get()
	switch {
	case sig != 0:
		logf("stopped by %v", sig)
	case err != nil:
		logf("%v", err)
	}
	w.cleanup()
	switch {
	case sig != 0:
		return 128 + int(sig)
	case err != nil:
		return 1
	}
	return 0
}

// takeSteps takes the steps in order; the first that fails ends it.
func (w *walkthrough) takeSteps(ctx context.Context) error {
	if err := w.cloneInto(ctx, w.clone); err != nil {
		return err
	}
	port, err := lockenv.FreePort()
	if err != nil {
		return err
	}
	w.port, w.addr = port, fmt.Sprintf("127.0.0.1:%d", port)
	info, err := os.Stat(w.work)
	if err != nil {
		return err
	}
	logf("make run in %s (mode %o), serving on %s", w.clone, info.Mode().Perm(), w.addr)
	if err := w.startRun(ctx, "run.log"); err != nil {
		return err
	}
	if !fileContains(w.run.log, "tokens.env") {
		return errors.New("make run's banner does not name the tokens file")
	}
	ran, err := w.pasteBlocks(ctx)
	if err != nil {
		return err
	}
	steps := []func(context.Context) error{
		w.checkFollowers,
		w.checkFailedStart,
		w.checkStopInForeground,
		w.checkStopInBackground,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	logf("passed: make run, %d documentation blocks, make smoke, make token and make hammer on its address, a failed start, make stop (of a make run in the foreground and of one in the background)", ran)
	return nil
}

// stopSignal is the signal that ended the walkthrough early, if any: every
// command it started is stopped by then (their context is cancelled), and
// cleanup runs once they have ended.
type stopSignal struct {
	mu  sync.Mutex
	sig syscall.Signal
}

func (s *stopSignal) cancelOnSignal(cancel context.CancelFunc) {
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := (<-caught).(syscall.Signal)
		s.mu.Lock()
		s.sig = sig
		s.mu.Unlock()
		cancel()
	}()
}

func (s *stopSignal) get() syscall.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}

// logf writes one line of the walkthrough's log, on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "walkthrough: "+format+"\n", args...)
}
