package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// checkFollowers: make run serves on a port of its own, not 8080, and
// smoke, token and hammer must find it without being told (make run
// records its address).
func (w *walkthrough) checkFollowers(ctx context.Context) error {
	noAddr := environ([]string{"HTTP_ADDR"})
	smoke := w.workFile("smoke.log")
	if err := makeLogged(ctx, w.clone, smoke, noAddr, "-s", "smoke"); err != nil {
		return failure(ctx, []string{smoke}, "make smoke failed")
	}
	if !fileContains(smoke, "using the service on "+w.addr) {
		return failure(ctx, []string{smoke}, "make smoke did not test make run's service on %s", w.addr)
	}
	logf("make smoke, on make run's %s: %s", w.addr, linesWith(smoke, "requests processed"))
	token := w.workFile("token.log")
	if err := makeLogged(ctx, w.clone, token, noAddr, "-s", "token", "USER=carol"); err != nil {
		return failure(ctx, []string{token}, "make token failed")
	}
	if !fileContains(token, "for the service on http://"+w.addr) {
		return failure(ctx, []string{token}, "make token did not name make run's %s", w.addr)
	}
	hammer := w.workFile("hammer.log")
	if err := makeLogged(ctx, w.clone, hammer, noAddr, "-s", "hammer", "ARGS=-duration 2s -users 50"); err != nil {
		return failure(ctx, []string{hammer}, "make hammer against make run's %s failed", w.addr)
	}
	logf("make token and make hammer followed make run to %s", w.addr)
	return nil
}

// checkFailedStart: a start that fails stops what it started. The second
// clone's make run finds the address taken.
func (w *walkthrough) checkFailedStart(ctx context.Context) error {
	if err := w.cloneInto(ctx, w.second); err != nil {
		return err
	}
	second := w.workFile("second.log")
	err := makeLogged(ctx, w.second, second, environ(nil, "HTTP_ADDR="+w.addr), "run")
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		return errors.New("make run on a taken address did not fail")
	}
	if !serversDown(w.second) {
		return failure(ctx, []string{second}, "a failed make run left its servers running")
	}
	logf("make run on a taken address failed and stopped the servers it started")
	return nil
}

// checkStopInForeground does what Ctrl-C does, to the API alone: it drains
// and exits 0, and so does make run; then make stop leaves no server
// listening.
func (w *walkthrough) checkStopInForeground(ctx context.Context) error {
	if err := w.run.signalAPI(syscall.SIGTERM); err != nil {
		return err
	}
	if err := w.run.wait(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		showTail(w.run.log, 5)
		return errors.New("make run did not end cleanly when its API was stopped")
	}
	w.run = nil
	if err := makeStop(ctx, w.clone); err != nil {
		return err
	}
	if !serversDown(w.clone) {
		return errors.New("make stop left a server running")
	}
	return nil
}

// checkStopInBackground: make stop also stops a make run left in the
// background, its API first (a background job ignores Ctrl-C; make stop
// finds it by its pid file).
func (w *walkthrough) checkStopInBackground(ctx context.Context) error {
	if err := w.startRun(ctx, "run2.log"); err != nil {
		return err
	}
	if err := makeStop(ctx, w.clone); err != nil {
		return err
	}
	if !w.run.endsWithin(ctx, 10*time.Second) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("make stop left the background make run running")
	}
	w.run = nil
	if listening(strconv.Itoa(w.port)) {
		return fmt.Errorf("make stop left the API listening on %s", w.addr)
	}
	if !serversDown(w.clone) {
		return errors.New("make stop left a server running")
	}
	return nil
}

// linesWith is the lines of the file at path that contain s.
func linesWith(path, s string) string {
	text, _ := os.ReadFile(path)
	var found []string
	for line := range strings.Lines(string(text)) {
		if strings.Contains(line, s) {
			found = append(found, strings.TrimSuffix(line, "\n"))
		}
	}
	return strings.Join(found, "\n")
}
