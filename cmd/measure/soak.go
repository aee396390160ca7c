package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// soak is `make soak`: a real crowd for about three minutes against one
// API instance on make run's Redis and PostgreSQL, default configuration:
// ROUNDS (3) rounds of fresh seats and hot seat for SLICE (20s) each and
// a contended run, USERS (2000) distinct users, 64 connections. Every
// hammer verdict must pass; the report gives the API's peak and idle RSS,
// goroutines and open files before and after, and the bookings made.
// SOAK_ADDR and SOAK_METRICS_ADDR are the instance's.
func soak(ctx context.Context, root string) error {
	rounds, err := count("ROUNDS", 3)
	if err != nil {
		return err
	}
	users, err := count("USERS", 2000)
	if err != nil {
		return err
	}
	slice := setting("SLICE", "20s")
	addr := setting("SOAK_ADDR", "127.0.0.1:18280")
	metrics := setting("SOAK_METRICS_ADDR", "127.0.0.1:18281")
	servers, work, err := onRunServers(ctx, root, "soak")
	if err != nil {
		return err
	}
	logPath := filepath.Join(work, "api.log")
	_ = os.Remove(logPath)
	p, err := devenv.Serve("api", logPath, append(servers.list(), "METRICS_ADDR="+metrics), addr, filepath.Join(root, "bin", "api"), "serve")
	if err != nil {
		return err
	}
	defer func() { _ = p.Stop(10 * time.Second) }()
	s := soakRun{api: p, metrics: metrics, hammer: newHammer(root, servers),
		args: []string{"-json", "-c", "64", "-users", fmt.Sprint(users), "-url", "http://" + addr}}
	before, err := s.state(ctx)
	if err != nil {
		return err
	}
	logf("soak", "before: %s", before)
	start := time.Now()
	for r := 1; r <= rounds; r++ {
		logf("soak", "round %d", r)
		for _, run := range [][]string{
			{"fresh-seats", "-duration", slice},
			{"hot-seat", "-duration", slice},
			{"contended", "-seats", "2000", "-per-seat", "20"},
		} {
			if err := s.run(ctx, run[0], run[1:]...); err != nil {
				return err
			}
		}
	}
	time.Sleep(2 * time.Second)
	after, err := s.state(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("soak: %d rounds in %d s, %d users, %d bookings, every verdict PASS\n", rounds, int(time.Since(start).Seconds()), users, s.bookings)
	fmt.Printf("soak: before: %s\n", before)
	fmt.Printf("soak: after:  %s (idle)\n", after)
	fmt.Printf("soak: peak RSS %s\n", mebibytes(status(p.Pid(), "VmHWM")))
	return nil
}

// soakRun is a soak's instance, its hammer and the bookings made so far.
type soakRun struct {
	api      *lockenv.Process
	metrics  string
	hammer   hammer
	args     []string // every run's
	bookings int
}

// state is the instance's goroutines, open files and resident memory now.
func (s *soakRun) state(ctx context.Context) (string, error) {
	m, err := scrape(ctx, s.metrics)
	if err != nil {
		return "", fmt.Errorf("the instance's metrics: %w", err)
	}
	return fmt.Sprintf("goroutines %s, open files %s, RSS %s", sample(m, "go_goroutines"), sample(m, "process_open_fds"), s.rss()), nil
}

func (s *soakRun) rss() string { return mebibytes(status(s.api.Pid(), "VmRSS")) }

// run hammers the instance with scenario and args, and logs the run.
func (s *soakRun) run(ctx context.Context, scenario string, args ...string) error {
	r, err := s.hammer.run(ctx, append(append([]string{"-scenario", scenario}, s.args...), args...)...)
	if err != nil && ctx.Err() == nil {
		logf("soak", "%s failed its verdict: %s", scenario, verdictOf(err))
		return errFailed
	}
	if err != nil {
		return err
	}
	s.bookings += r.Responses["200"]
	logf("soak", "%s: %d requests, %s req/s, p99 %s ms, RSS %s", scenario, r.Sent, number(math.Floor(r.Throughput)), number(r.Latency.P99), s.rss())
	return nil
}
