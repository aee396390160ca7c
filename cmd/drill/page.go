package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
)

// pageResult is what the drill reads of tools/pagecheck's -json.
type pageResult struct {
	Pass         bool    `json:"pass"`
	Reason       string  `json:"reason"`
	Bookings     int     `json:"bookings"`
	Retries      int     `json:"retries"`
	MapSeconds   float64 `json:"mapSeconds"`
	AgreeSeconds float64 `json:"agreeSeconds"`
	Stream       *struct {
		Opens     int `json:"opens"`
		Snapshots int `json:"snapshots"`
	} `json:"stream"`
}

// line is the page's line of make rolling-restart.
func (p *pageResult) line() string {
	opens, snapshots := "?", "?"
	if p.Stream != nil {
		opens, snapshots = fmt.Sprint(p.Stream.Opens), fmt.Sprint(p.Stream.Snapshots)
	}
	verdict := "PASS"
	if !p.Pass {
		verdict = "FAIL: " + p.Reason
	}
	return fmt.Sprintf("the page through HAProxy, 3 instances restarted: %d bookings made meanwhile, %d retried; "+
		"the seat map showed the last %s s after it was answered, the page %s s after; its stream opened %s times, %s snapshot; %s",
		p.Bookings, p.Retries, number(p.MapSeconds), number(p.AgreeSeconds), opens, snapshots, verdict)
}

// page drives the page in Chromium through HAProxy (tools/pagecheck,
// its result in DIR/page.json) while the instances restart: each instance
// that goes ends the page's stream, which the browser must reopen.
func (d *drill) page(ctx context.Context, c *cluster) error {
	tokens, err := d.tokens(ctx)
	if err != nil {
		return err
	}
	result, errs := filepath.Join(d.dir, "page.json"), filepath.Join(d.dir, "page.err")
	check, err := background(ctx, result, errs, "bin/pagecheck", "-json", "-url", "http://"+c.addr,
		"-admin-token", tokens["ADMIN"], "-user-token", tokens["ALICE"], "-duration", "12s")
	if err != nil {
		return err
	}
	if err := pause(ctx, 2*time.Second); err != nil {
		_ = check.Wait()
		return err
	}
	_, rollErr := d.change(ctx, "roll")
	checkErr := check.Wait()
	var p pageResult
	if b, err := os.ReadFile(result); err == nil && json.Unmarshal(b, &p) == nil {
		fmt.Fprintln(os.Stderr, p.line())
	}
	if rollErr != nil {
		fmt.Fprintln(os.Stderr, tail(d.changeLog("roll"), 5))
		return fmt.Errorf("the cluster's roll failed under the page (see %s)", d.changeLog("roll"))
	}
	if checkErr != nil {
		if b, err := os.ReadFile(errs); err == nil {
			_, _ = os.Stderr.Write(b)
		}
		return fmt.Errorf("the page failed through HAProxy (see %s)", result)
	}
	return nil
}

// tokens reads DIR/tokens.env (ADMIN, ALICE, ...), which the cluster
// writes once HAProxy serves: a few seconds are given for it to appear.
func (d *drill) tokens(ctx context.Context) (map[string]string, error) {
	path := filepath.Join(d.dir, "tokens.env")
	for deadline := time.Now().Add(10 * time.Second); ; {
		tokens, err := devenv.ReadTokens(d.dir)
		if err == nil && tokens["ADMIN"] != "" && tokens["ALICE"] != "" {
			return tokens, nil
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("no ADMIN and ALICE tokens in %s (make cluster writes them once HAProxy serves)", path)
		}
		if err := pause(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}
