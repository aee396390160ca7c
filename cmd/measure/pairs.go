package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// pairs is `make pairs`: builds or settings of the service against one
// another, in paired, alternating rounds, judged by benchstat. Every
// instance runs side by side on make run's Redis and PostgreSQL, each on a
// PostgreSQL database and a Redis database of its own, made anew, as a
// deployment of its own would be. Every round hammers each instance once
// per scenario (DURATION, default 5s; USERS, default 2,000 distinct users;
// the default configuration, rate limits on), in an order rotated round by
// round, and records its throughput and its CPU per request (the
// instance's utime + stime from /proc over the requests sent: it moves
// less with the machine's noise than throughput does).
//
// INSTANCES is a list of NAME=REVISION[,VAR=VALUE...], the first the base
// the others are compared with; REVISION "." is the working tree, and the
// setting "traced" stands for tracing sampled at 1% exporting over OTLP to
// tools/otlpsink. Default: "before=HEAD after=.". ROUNDS (default 10),
// SCENARIOS (default "hot-seat fresh-seats"), CLIENT (default fasthttp).
// The runs are kept in .data/pairs/NAME.txt in Go's benchmark format; at
// the end benchstat compares every instance with the base.
func pairs(ctx context.Context, root string) error {
	cfg, err := pairsSettings()
	if err != nil {
		return err
	}
	servers, work, err := onRunServers(ctx, root, "pairs")
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(work, "*.txt"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	b := &bout{cfg: cfg, root: root, work: work, servers: servers, hammer: newHammer(root, servers)}
	defer b.running.stop()
	if err := b.serve(ctx); err != nil {
		return err
	}
	logf("pairs", "%s: %s, %s, %d rounds", strings.Join(cfg.specs, " "), strings.Join(cfg.scenarios, " "), cfg.client, cfg.rounds)
	if err := b.measure(ctx); err != nil {
		return err
	}
	var columns []column
	for _, in := range b.instances {
		columns = append(columns, column{in.name, filepath.Join(work, in.name+".txt")})
	}
	fmt.Println()
	if err := benchstat(ctx, root, columns...); err != nil {
		return err
	}
	// The instances' logs hold every request's access line (gigabytes
	// over a run): kept only when a run fails.
	for _, in := range b.instances {
		_ = os.Remove(filepath.Join(work, in.name+".log"))
	}
	return nil
}

// measure warms every instance up, then runs the rounds, each run's
// throughput and CPU per request appended to work/NAME.txt.
func (b *bout) measure(ctx context.Context) error {
	for _, s := range b.cfg.scenarios {
		for _, in := range b.instances {
			if _, err := b.run(ctx, in, s, "2s"); err != nil {
				return err
			}
		}
	}
	for round := 1; round <= b.cfg.rounds; round++ {
		for _, s := range b.cfg.scenarios {
			for _, name := range rotated(round, b.names()) {
				in := b.byName(name)
				t0, err := cpuTicks(in.proc.Pid())
				if err != nil {
					return fmt.Errorf("%s's CPU time: %w", name, err)
				}
				r, err := b.run(ctx, in, s, b.cfg.duration)
				if err != nil {
					return err
				}
				t1, err := cpuTicks(in.proc.Pid())
				if err != nil {
					return fmt.Errorf("%s's CPU time: %w", name, err)
				}
				rps, us := math.Floor(r.Throughput), cpuPerRequest(t1-t0, r.Sent)
				logf("pairs", "round %d, %s, %s: %s req/s, %s µs CPU per request", round, s, name, number(rps), number(us))
				line := fmt.Sprintf("%s 1 %s req/s %s cpu-us/req", benchmarkName(s), number(rps), number(us))
				if err := appendLine(filepath.Join(b.work, name+".txt"), line); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// run hammers instance in with scenario for duration.
func (b *bout) run(ctx context.Context, in instance, scenario, duration string) (report, error) {
	r, err := b.hammer.run(ctx, "-scenario", scenario, "-users", fmt.Sprint(b.cfg.users), "-c", "64",
		"-duration", duration, "-client", b.cfg.client, "-verify=false", "-json", "-url", "http://"+in.addr)
	if err != nil && ctx.Err() == nil {
		logf("pairs", "%s on %s failed its verdict: %s", scenario, in.name, verdictOf(err))
		return r, errFailed
	}
	return r, err
}
