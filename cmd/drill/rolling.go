package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
)

// rollingConfig is make rolling-restart's environment: how many runs of
// each change, and how long each hammer run lasts.
type rollingConfig struct {
	runs          int // RUNS: rolling restarts (default 3)
	failovers     int // FAILOVERS: Sentinel failovers (default 1)
	pgSwitchovers int // PG_SWITCHOVERS: Patroni switchovers (default 1)
	pgFailovers   int // PG_FAILOVERS: the PostgreSQL leader SIGKILLed (default 1)
	duration      string
	// pgFailoverDuration is a PostgreSQL failover run's (see
	// pgFailoverDuration).
	pgFailoverDuration string
}

func rollingConfigFrom(getenv func(string) string) (rollingConfig, error) {
	cfg := rollingConfig{duration: cmp.Or(getenv("DURATION"), "25s")}
	cfg.pgFailoverDuration = pgFailoverDuration(cfg.duration, getenv("PG_FAILOVER_DURATION"))
	for _, knob := range []struct {
		name string
		def  int
		to   *int
	}{
		{"RUNS", 3, &cfg.runs},
		{"FAILOVERS", 1, &cfg.failovers},
		{"PG_SWITCHOVERS", 1, &cfg.pgSwitchovers},
		{"PG_FAILOVERS", 1, &cfg.pgFailovers},
	} {
		*knob.to = knob.def
		if v := getenv(knob.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return cfg, fmt.Errorf("%s must be a number, not '%s'", knob.name, v)
			}
			*knob.to = n
		}
	}
	return cfg, nil
}

// minPGFailoverRun is how long a PostgreSQL failover run lasts at least:
// the hammer must book again after the promotion, some 8 s after the kill.
const minPGFailoverRun = 20 * time.Second

// pgFailoverDuration is a PostgreSQL failover run's duration: given
// (PG_FAILOVER_DURATION) when it is, else duration (DURATION), raised to
// minPGFailoverRun when shorter.
func pgFailoverDuration(duration, given string) string {
	if given != "" {
		return given
	}
	if d, err := time.ParseDuration(duration); err == nil && d < minPGFailoverRun {
		return minPGFailoverRun.String()
	}
	return duration
}

// run is make rolling-restart: on a cluster of its own, make smoke and the
// page through HAProxy, then the hammer under each change in turn.
func (cfg rollingConfig) run(ctx context.Context, d *drill) error {
	if err := build(ctx, "cmd/api", "cmd/hammer", "cmd/devenv", "tools/pagecheck"); err != nil {
		return err
	}
	if err := devenv.Install(os.Stderr, devenv.Browser); err != nil {
		return fmt.Errorf("installing Chromium failed: %w", err)
	}
	c, err := ownCluster(ctx, d.dir, d.log)
	if err != nil {
		return err
	}
	defer c.down(d.log)

	if err := d.smoke(ctx, c); err != nil {
		return err
	}
	if err := d.page(ctx, c); err != nil {
		return err
	}
	if !cfg.each(ctx, d, c, "roll", cfg.runs) {
		return fmt.Errorf("a rolling restart failed requests or lost events (see %s)", d.dir)
	}
	if cfg.runs > 0 {
		d.log.Printf("passed: %d rolling restarts under load, no request failed, no event lost", cfg.runs)
	}
	if !cfg.each(ctx, d, c, "failover", cfg.failovers) {
		return fmt.Errorf("a Sentinel failover failed requests or lost events (see %s)", d.dir)
	}
	if cfg.failovers > 0 {
		d.log.Printf("passed: %d Sentinel failovers under load, no request failed, no event lost", cfg.failovers)
	}
	// Both PostgreSQL checks run, whichever fails.
	failed := false
	if !cfg.each(ctx, d, c, "pg-switchover", cfg.pgSwitchovers) {
		failed = true
		d.log.Printf("a PostgreSQL switchover failed requests or lost events (see %s)", d.dir)
	} else if cfg.pgSwitchovers > 0 {
		d.log.Printf("passed: %d PostgreSQL switchovers under load, no request failed, no event lost", cfg.pgSwitchovers)
	}
	if !cfg.each(ctx, d, c, "pg-failover", cfg.pgFailovers) {
		failed = true
		d.log.Printf("a PostgreSQL failover failed requests beyond 503 unavailable, or lost events (see %s)", d.dir)
	} else if cfg.pgFailovers > 0 {
		d.log.Printf("passed: %d PostgreSQL failovers under load (the leader SIGKILLed), nothing but 503 unavailable while no node led, no event lost", cfg.pgFailovers)
	}
	if failed {
		return errReported
	}
	return nil
}

// each runs the hammer under change count times, all of them, and reports
// whether every run passed (none when the drill is interrupted).
func (cfg rollingConfig) each(ctx context.Context, d *drill, c *cluster, change string, count int) bool {
	passed := true
	for r := 1; r <= count && ctx.Err() == nil; r++ {
		if !cfg.under(ctx, d, c, change, r) {
			passed = false
		}
	}
	return passed && ctx.Err() == nil
}

// under is run r of change (roll, failover, pg-switchover or pg-failover):
// a hammer run through HAProxy with the change 3 s in. It prints the
// run's line and reports whether the hammer's verdict passed.
func (cfg rollingConfig) under(ctx context.Context, d *drill, c *cluster, change string, r int) bool {
	name := fmt.Sprintf("%s-%d", change, r)
	report, errs := filepath.Join(d.dir, name+".json"), filepath.Join(d.dir, name+".err")
	flags := []string{"-duration", cfg.duration}
	if change == "pg-failover" {
		flags = []string{"-duration", cfg.pgFailoverDuration, "-allow-unavailable"}
	}
	hammer, err := startHammer(ctx, c.addr, report, errs, flags...)
	if err != nil {
		d.log.Print(err)
		return false
	}
	if pause(ctx, 3*time.Second) != nil {
		_ = hammer.Wait()
		return false
	}
	began := time.Now()
	// pg-switchover and pg-failover print one line of figures on stdout.
	result, err := d.change(ctx, change)
	if err != nil {
		fmt.Fprintln(os.Stderr, tail(d.changeLog(change), 5))
		d.log.Printf("the cluster's %s failed (see %s)", change, d.changeLog(change))
		_ = hammer.Wait()
		return false
	}
	took := int(math.Round(time.Since(began).Seconds()))
	hammerErr := hammer.Wait()
	what := during(change, took, parseFigures(result))
	if rep, err := readReport(report); err != nil {
		d.log.Printf("%s %d: the hammer ended without a report while %s", change, r, what)
	} else {
		fmt.Println(runLine(fmt.Sprintf("%s %d", change, r), what, rep, change == "pg-failover"))
	}
	if hammerErr != nil {
		if b, err := os.ReadFile(errs); err == nil {
			_, _ = os.Stderr.Write(b)
		}
		return false
	}
	return true
}

// change runs the cluster's change (roll, failover, pg-switchover,
// pg-failover), its log appended to DIR/CHANGE.log, and returns what it
// printed on stdout.
func (d *drill) change(ctx context.Context, change string) (string, error) {
	return output(ctx, topology("cluster", change, d.dir), d.changeLog(change))
}

func (d *drill) changeLog(change string) string { return filepath.Join(d.dir, change+".log") }
