package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// compare is `make compare`: the service against the shared baseline, on
// the same Redis, PostgreSQL and hammer, in one run. It serves the
// baseline of BASELINE_DIR (default ../shared/baseline) in its three modes
// (naive: the naive flow; static: a fixed 409, the hot seat's ceiling;
// insertonly: one INSERT and commit per booking, the fresh seats' naive
// ceiling), the service, and the service with FAST_PATH=false side by
// side, then hammers each in turn as USERS (2000) distinct users (a real
// crowd: per-user costs show) on CONNECTIONS (64), for DURATION (5s),
// ROUNDS (10) times, interleaved, each round in another order (rotated),
// so a busy moment of the machine does not land on one of them only, nor
// one always right after another. It prints benchstat's medians and
// verdicts over the rounds (req/s, p99 and the share of 409 seat_locked
// answers) of the service against the naive flow and the limits, and the
// service instance's peak resident memory over all its runs.
//
// Every run is made with each of CLIENTS (default "fasthttp nethttp": the
// hammer's cheap client, and Go's net/http, what most callers use).
// SCENARIOS (default "hot-seat fresh-seats contended") picks some of them;
// fresh-new is fresh seats from a new database on: the service, the naive
// flow and insert-only each serve it from a database made empty for the
// run (service-new, naive-new, insertonly-new), and each round books
// FRESH_NEW_BOOKINGS (8,000) seats in 2,000-seat schedules made for it, so
// the tables grow from nothing as the rounds go, as a new deployment's do.
// BEFORE=<git revision> also serves the service as built from that
// revision (service-before) and prints after against before. TRACED=1
// also serves the service with OpenTelemetry tracing on, exporting over
// OTLP/HTTP to a span-counting sink (tools/otlpsink): every request
// sampled (service-traced) and one trace in a hundred
// (service-traced-sampled). VARIANT="NAME=VALUE ..." also serves the
// service with those settings (service-variant), in every scenario but
// fresh-new. PGHA=1 runs everything on make cluster's PostgreSQL pair
// instead (a leader and its synchronous standby under Patroni, started if
// need be): what synchronous replication costs each contender.
func compare(ctx context.Context, root string) error {
	cfg, err := compareSettings(root)
	if err != nil {
		return err
	}
	servers, work, err := onRunServers(ctx, root, "compare")
	if err != nil {
		return err
	}
	if cfg.pgha {
		url, err := pgPair(runDir(root))
		if err != nil {
			return err
		}
		servers["DATABASE_URL"] = url
		// A Redis database of its own: the pair numbers its schedules from
		// 1 too, and the seals of the single server's booked seats would
		// say this run's seats are taken.
		servers["REDIS_URL"] = redisDatabase(servers["REDIS_URL"], 2)
		_, host, _ := strings.Cut(servers["DATABASE_URL"], "@")
		logf("compare", "on the PostgreSQL pair (synchronous standby): %s", host)
	}
	if err := cfg.build(ctx, root, work); err != nil {
		return err
	}
	c := &contest{cfg: cfg, root: root, work: work, servers: servers, hammer: newHammer(root, servers)}
	defer c.running.stop()
	if err := c.serve(ctx); err != nil {
		return err
	}
	if err := c.measure(ctx); err != nil {
		return err
	}
	if err := c.report(ctx); err != nil {
		return err
	}
	// The targets' logs hold every request's access line (gigabytes over
	// a run): kept only when a run fails.
	logs, _ := filepath.Glob(filepath.Join(work, "*.log"))
	for _, l := range logs {
		_ = os.Remove(l)
	}
	return nil
}

// build builds the baseline, the build BEFORE and the span sink, as the
// run needs them.
func (cfg compareConfig) build(ctx context.Context, root, work string) error {
	if _, err := os.Stat(filepath.Join(cfg.baselineDir, "main.go")); err != nil {
		return fmt.Errorf("no shared baseline in %s: name its directory in BASELINE_DIR", cfg.baselineDir)
	}
	if err := goBuild(ctx, cfg.baselineDir, filepath.Join(work, "baseline"), ".", "GOFLAGS=-mod=mod"); err != nil {
		return err
	}
	if cfg.before != "" {
		if err := buildRevision(ctx, root, cfg.before, work, filepath.Join(work, "api-before")); err != nil {
			return err
		}
	}
	if cfg.traced {
		return goBuild(ctx, root, filepath.Join(root, "bin", "otlpsink"), "./tools/otlpsink")
	}
	return nil
}

// measure warms every target up, then runs the rounds, each run's figures
// appended to bench/TARGET.txt under the run's directory.
func (c *contest) measure(ctx context.Context) error {
	bench := filepath.Join(c.work, "bench")
	if err := errors.Join(os.RemoveAll(bench), os.MkdirAll(bench, 0o755)); err != nil {
		return err
	}
	logf("compare", "warming up")
	for _, s := range c.cfg.scenarios {
		for _, t := range c.cfg.targets(s) {
			if _, err := c.run(ctx, c.cfg.clients[0], t, s, warmupArgs(s)); err != nil {
				return err
			}
		}
	}
	for r := 1; r <= c.cfg.rounds; r++ {
		for _, client := range c.cfg.clients {
			for _, s := range c.cfg.scenarios {
				for _, t := range rotated(r, c.cfg.targets(s)) {
					for range runsOf(s) {
						line, err := c.run(ctx, client, t, s, c.cfg.args(s))
						if err != nil {
							return err
						}
						logf("compare", "round %d %s %s %s: %s", r, client, s, t, line)
						if err := appendLine(filepath.Join(bench, t+".txt"), benchmarkName(s)+"/"+client+" 1 "+line); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// run hammers target with client in scenario and returns the run as
// benchstat's units: "THROUGHPUT req/s P99 p99-ms SHARE locked-%".
func (c *contest) run(ctx context.Context, client, target, scenario string, args []string) (string, error) {
	verify := strings.HasPrefix(target, "service") // only the service has a seat map
	all := []string{"-json", "-client", client, "-scenario", scenario, "-c", fmt.Sprint(c.cfg.conns),
		"-users", fmt.Sprint(c.cfg.users), "-url", "http://" + c.addr[target], fmt.Sprintf("-verify=%t", verify)}
	all = append(all, args...)
	if strings.HasSuffix(target, "static") {
		// The static limits book nothing: their hot seat is any seat, refused at once.
		all = append(all, "-schedule", "1", "-seat", "1")
	}
	r, err := c.hammer.run(ctx, all...)
	if err != nil && ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		logf("compare", "%s on %s (%s) failed its verdict:\n%s", scenario, target, client, verdictOf(err))
		return "", errFailed
	}
	locked := 0.0
	if r.Sent > 0 {
		locked = float64(r.Responses["409 seat_locked"]) * 100 / float64(r.Sent)
	}
	return fmt.Sprintf("%s req/s %s p99-ms %s locked-%%", number(r.Throughput), number(r.Latency.P99), number(locked)), nil
}
