package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/seatlock/seatlock/internal/auth"
)

// seatMapView is the seat map as one target reported it after the run.
type seatMapView struct {
	Target   string
	Statuses map[int]string
	Err      error
}

// hammer runs cfg end to end: set up the schedule, fire every request,
// read the seat map back and judge. An error means the run could not be
// carried out at all; a failed verdict is in the report.
func hammer(ctx context.Context, cfg config) (*report, error) {
	runID := newRunID()
	hc, tr := newHTTPClient(cfg.C, len(cfg.Targets))
	defer tr.CloseIdleConnections()
	ttl := tokenTTL(cfg)

	scheduleID := cfg.ScheduleID
	if cfg.NewSeats > 0 {
		admin, err := auth.Mint(cfg.Secret, "hammer-"+runID+"-admin", auth.RoleAdmin, ttl)
		if err != nil {
			return nil, fmt.Errorf("mint admin token: %w", err)
		}
		scheduleID, err = createSchedule(ctx, hc, cfg.Timeout, cfg.Targets[0], admin, "hammer "+runID, cfg.NewSeats)
		if err != nil {
			return nil, err
		}
	}
	if err := preflight(ctx, hc, cfg, scheduleID); err != nil {
		return nil, err
	}
	users, tokens, err := mintUsers(cfg.Secret, runID, cfg.N, ttl)
	if err != nil {
		return nil, err
	}

	outcomes, wall := fire(ctx, hc, cfg, scheduleID, users, tokens)

	var views []seatMapView
	// An interrupted run fails anyway; reading the seat map back would only
	// delay the exit the user asked for.
	if ctx.Err() == nil {
		views = readBack(ctx, hc, cfg, scheduleID)
	}
	r := summarize(cfg, runID, scheduleID, outcomes, wall, views)
	r.Verdict = judge(r, views)
	return r, nil
}

// preflight refuses to hammer seats that do not exist or are already
// reserved: the verdict "exactly one 200 per seat" would be meaningless.
func preflight(ctx context.Context, hc *http.Client, cfg config, scheduleID int64) error {
	statuses, err := fetchSeatMap(ctx, hc, cfg.Timeout, cfg.Targets[0], scheduleID)
	if err != nil {
		return fmt.Errorf("before the run: %w", err)
	}
	for _, seat := range cfg.Seats {
		switch st, ok := statuses[seat]; {
		case !ok:
			return fmt.Errorf("before the run: schedule %d has no seat %d", scheduleID, seat)
		case st != "available":
			return fmt.Errorf("before the run: seat %d of schedule %d is %q, want available (hammer a fresh seat)", seat, scheduleID, st)
		}
	}
	return nil
}

// readBack fetches the seat map through every target, so an instance that
// disagrees with the others is caught too.
func readBack(ctx context.Context, hc *http.Client, cfg config, scheduleID int64) []seatMapView {
	views := make([]seatMapView, len(cfg.Targets))
	for i, t := range cfg.Targets {
		statuses, err := fetchSeatMap(ctx, hc, cfg.Timeout, t, scheduleID)
		views[i] = seatMapView{Target: t, Statuses: statuses, Err: err}
	}
	return views
}
