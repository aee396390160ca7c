package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
)

// windowLen is how long a sustain window lasts.
const windowLen = 10 * time.Second

// sustain is `make sustain`: fresh seats at full speed for DURATION
// (default 5m) on a new database: one API instance, default
// configuration, USERS (2000) distinct users on 64 connections, on make
// run's Redis and PostgreSQL, with a database and a Redis database made
// empty for the run. Every 10 s it reports the window's bookings a second
// (the instance's seatlock_booking_outcomes_total) and the CPU time
// PostgreSQL spent per booking (every process of the server: treeTicks).
// Then the verdict (sustainVerdict); it fails when a target is missed or
// the hammer's verdict fails. BEFORE=<git revision> serves the service as
// built from that revision instead: the same run for the build before a
// change. SUSTAIN_ADDR and SUSTAIN_METRICS_ADDR are the instance's.
func sustain(ctx context.Context, root string) error {
	length := setting("DURATION", "5m")
	duration, err := time.ParseDuration(length)
	if err != nil {
		return fmt.Errorf("DURATION=%q: %w", length, err)
	}
	users, err := count("USERS", 2000)
	if err != nil {
		return err
	}
	addr := setting("SUSTAIN_ADDR", "127.0.0.1:18380")
	metrics := setting("SUSTAIN_METRICS_ADDR", "127.0.0.1:18381")
	servers, work, err := onRunServers(ctx, root, "sustain")
	if err != nil {
		return err
	}
	api := filepath.Join(root, "bin", "api")
	if before := os.Getenv("BEFORE"); before != "" {
		api = filepath.Join(work, "api-before")
		if err := buildRevision(ctx, root, before, work, api); err != nil {
			return err
		}
		logf("sustain", "serving the build of %s", before)
	}
	settings, err := own(ctx, servers, "sustain", 4)
	if err != nil {
		return err
	}
	logPath := filepath.Join(work, "api.log")
	_ = os.Remove(logPath)
	p, err := devenv.Serve("api", logPath, append(append(servers.list(), settings...), "METRICS_ADDR="+metrics), addr, api, "serve")
	if err != nil {
		return err
	}
	defer func() { _ = p.Stop(10 * time.Second) }()
	postmaster, err := postmasterPid(servers["PG_DIR"])
	if err != nil {
		return err
	}
	run := sustainRun{work: work, metrics: metrics, postmaster: postmaster}
	windows, err := run.watch(ctx, newHammer(root, servers), length, duration, users, addr)
	if err != nil {
		return err
	}
	lines, pass := sustainVerdict(windows, int(windowLen/time.Second))
	for _, l := range lines {
		fmt.Println(l)
	}
	if !pass {
		return errFailed
	}
	return nil
}

// postmasterPid is the pid of the PostgreSQL server whose cluster lives in
// pgDir (its data/postmaster.pid's first line).
func postmasterPid(pgDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(pgDir, "data", "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL's pid (PG_DIR): %w", err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// sustainRun is what a sustain run reads as the hammer books.
type sustainRun struct {
	work       string // .data/sustain
	metrics    string // the instance's METRICS_ADDR
	postmaster int
}

// sample is the bookings made and the CPU ticks PostgreSQL used so far.
func (s sustainRun) sample(ctx context.Context) (bookings int64, ticks int64, at time.Time, err error) {
	text, err := scrape(ctx, s.metrics)
	if err != nil {
		return 0, 0, at, fmt.Errorf("the instance's metrics: %w", err)
	}
	ticks, err = treeTicks(s.postmaster)
	if err != nil {
		return 0, 0, at, fmt.Errorf("PostgreSQL's CPU time: %w", err)
	}
	return int64(sum(text, "seatlock_booking_outcomes_total")), ticks, time.Now(), nil
}

// measured is a window of b bookings and c ticks of PostgreSQL's CPU
// over elapsed, to a tenth as printed.
func measured(n int, b, c int64, elapsed time.Duration) window {
	w := window{n: n, perSecond: math.Round(float64(b)/elapsed.Seconds()*10) / 10}
	if b > 0 {
		w.cpu = cpuPerRequest(c, int(b))
	}
	return w
}
