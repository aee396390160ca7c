package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pgFailoversConfig is make pg-failovers' environment.
type pgFailoversConfig struct {
	runs     int    // N: how many failovers (default 20)
	duration string // DURATION: each hammer run's (default 30s)
	// after is FAILOVER_AFTER: seconds into the run when the leader is
	// killed (default 5).
	after time.Duration
	// command is PG_FAILOVER_CMD: a bash command line (DIR as $1) in place
	// of the cluster's pg-failover, which must print its line of figures
	// within timeout (FAILOVER_TIMEOUT seconds, default 120).
	command string
	timeout time.Duration
}

func pgFailoversConfigFrom(getenv func(string) string) (pgFailoversConfig, error) {
	cfg := pgFailoversConfig{duration: cmp.Or(getenv("DURATION"), "30s"), command: getenv("PG_FAILOVER_CMD")}
	n := cmp.Or(getenv("N"), "20")
	runs, err := strconv.Atoi(n)
	if err != nil || runs < 1 || strings.ContainsAny(n, "+-") {
		return cfg, fmt.Errorf("N must be a positive number, not '%s'", n) //nolint:staticcheck // N is the knob, spelled as it is set
	}
	cfg.runs = runs
	if cfg.after, err = seconds("FAILOVER_AFTER", cmp.Or(getenv("FAILOVER_AFTER"), "5")); err != nil {
		return cfg, err
	}
	if cfg.timeout, err = seconds("FAILOVER_TIMEOUT", cmp.Or(getenv("FAILOVER_TIMEOUT"), "120")); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// seconds reads the knob name: a number of seconds (5, 2.5) or a duration
// (5s, 2m).
func seconds(name, value string) (time.Duration, error) {
	if s, err := strconv.ParseFloat(value, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(value); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%s must be a number of seconds, not '%s'", name, value)
}

// runRow is one run of make pg-failovers: its line of pgfailovers.jsonl
// and its row of the table. A run without the hammer's report has no
// counts.
type runRow struct {
	Run int `json:"run"`
	figures
	*counts
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons"`
}

// counts is what a run's hammer report says, behind its verdict.
type counts struct {
	LongestGapMs    int64 `json:"longestGapMs"`
	Unavailable     int   `json:"unavailable"`
	Other5xx        int   `json:"other5xx"`
	TransportErrors int   `json:"transportErrors"`
	Bookings        int   `json:"bookings"`
	// Lost and Unchecked are nil when the bookings were not read back.
	Lost          *int  `json:"lost"`
	Unchecked     *int  `json:"unchecked"`
	SeatsTwice    int   `json:"seatsTwice"`
	EventsMissing int   `json:"eventsMissing"`
	Sent          int   `json:"sent"`
	WallMs        int64 `json:"wallMs"`
}

func countsOf(r *hammerReport) *counts {
	c := &counts{
		Unavailable:     r.Unavailable,
		Other5xx:        r.serverErrors(unavailableStatus),
		TransportErrors: r.transportErrors(),
		Bookings:        r.Responses["200"],
		SeatsTwice:      r.Seats.WonMoreThanOnce,
		Sent:            r.Sent,
		WallMs:          int64(math.Floor(r.WallMs)),
	}
	if r.LongestGapMs != nil {
		c.LongestGapMs = int64(math.Floor(*r.LongestGapMs))
	}
	if a := r.Acknowledged; a != nil {
		c.Lost, c.Unchecked = &a.Lost, &a.Unchecked
	}
	if r.Watch != nil {
		c.EventsMissing = len(r.Watch.Missing)
	}
	return c
}

// run is make pg-failovers: on a cluster of its own, N hammer runs with
// the PostgreSQL leader SIGKILLed FAILOVER_AFTER seconds into each; a row
// a run, then the median and worst time without a booking and the totals.
func (cfg pgFailoversConfig) run(ctx context.Context, d *drill) error {
	if err := build(ctx, "cmd/api", "cmd/hammer", "cmd/devenv"); err != nil {
		return err
	}
	c, err := ownCluster(ctx, d.dir, d.log)
	if err != nil {
		return err
	}
	defer c.down(d.log)
	d.log.Printf("the cluster serves on %s; %d runs of %s, the failover %s s in (DIR %s)",
		c.addr, cfg.runs, cfg.duration, number(cfg.after.Seconds()), d.dir)

	jsonlPath := filepath.Join(d.dir, "pgfailovers.jsonl")
	jsonl, err := os.Create(jsonlPath)
	if err != nil {
		return err
	}
	defer func() { _ = jsonl.Close() }()
	lines := json.NewEncoder(jsonl)
	fmt.Println(tableHeader)
	var rows []runRow
	failed := 0
	for r := 1; r <= cfg.runs; r++ {
		// The cluster serves again (HAProxy's check, its database
		// promoted) before the next run's clock starts.
		if err := c.awaitServing(ctx, 60*time.Second); err != nil {
			return fmt.Errorf("the cluster does not serve 60 s after run %d: %w", r-1, err)
		}
		row, err := cfg.one(ctx, d, c, r)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		if err := lines.Encode(row); err != nil {
			return fmt.Errorf("write %s: %w", jsonlPath, err)
		}
		fmt.Println(row.row())
		if !row.Pass {
			failed++
			if row.counts != nil {
				for _, reason := range row.Reasons {
					fmt.Fprintln(os.Stderr, "      - "+reason)
				}
			}
		}
	}
	fmt.Println(summary(rows, cfg.runs))
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed their verdict (reports in %s/run-N.json, rows in %s)", failed, cfg.runs, d.dir, jsonlPath)
	}
	d.log.Printf("passed: %d PostgreSQL failovers under load, no booking lost or answered other than 200, 409 or 503 unavailable", cfg.runs)
	return nil
}

// one is run r: the hammer with -allow-unavailable, and the failover
// AFTER seconds in. Its error is the drill's interruption; a run that
// failed is a row that did not pass.
func (cfg pgFailoversConfig) one(ctx context.Context, d *drill, c *cluster, r int) (runRow, error) {
	report := filepath.Join(d.dir, fmt.Sprintf("run-%d.json", r))
	errs := filepath.Join(d.dir, fmt.Sprintf("run-%d.err", r))
	hammer, err := startHammer(ctx, c.addr, report, errs, "-duration", cfg.duration, "-allow-unavailable")
	if err != nil {
		return runRow{}, err
	}
	if err := pause(ctx, cfg.after); err != nil {
		_ = hammer.Wait()
		return runRow{}, err
	}
	line, failoverErr := cfg.failover(ctx, d.dir)
	status := exitStatus(hammer.Wait())
	if ctx.Err() != nil {
		return runRow{}, ctx.Err()
	}
	if failoverErr != "" {
		d.log.Printf("run %d: %s", r, failoverErr)
	}
	row := runRow{Run: r, figures: parseFigures(line), Reasons: []string{}}
	rep, err := readReport(report)
	if err != nil {
		noReport := fmt.Sprintf("the hammer gave no report (exit %d)", status)
		d.log.Printf("run %d: %s:", r, noReport)
		fmt.Fprintln(os.Stderr, tail(errs, 5))
		row.Reasons = append(row.Reasons, noReport)
	} else {
		row.counts = countsOf(rep)
		row.Pass = rep.Verdict.Pass && failoverErr == ""
		row.Reasons = append(row.Reasons, rep.Verdict.Reasons...)
	}
	if failoverErr != "" {
		row.Reasons = append(row.Reasons, failoverErr)
	}
	return row, nil
}

// failover runs the failover command on DIR, its stderr appended to
// DIR/failover.log, and returns its stdout, or what went wrong: it
// failed, took longer than FAILOVER_TIMEOUT, or printed no
// promotedAfterMs.
func (cfg pgFailoversConfig) failover(ctx context.Context, dir string) (line, problem string) {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	cmd := topology("cluster", "pg-failover", dir)
	if cfg.command != "" {
		cmd = exec.Command("bash", "-c", cfg.command, "pg-failover", dir)
	}
	logPath := filepath.Join(dir, "failover.log")
	out, err := output(ctx, cmd, logPath)
	line = strings.TrimRight(out, "\n")
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return line, fmt.Sprintf("the failover command did not end within %v (see %s)", cfg.timeout, logPath)
	case err != nil:
		return line, fmt.Sprintf("the failover command failed (see %s)", logPath)
	case parseFigures(line).PromotedAfterMs == nil:
		return line, fmt.Sprintf("the failover command printed no promotedAfterMs: '%s'", line)
	}
	return line, ""
}
