package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// startHammer starts bin/hammer booking fresh seats as 2,000 users through
// HAProxy (addr), with a watcher on each schedule's live stream, its JSON
// report going to the file report and its stderr to errs; flags add
// -duration and the like.
func startHammer(ctx context.Context, addr, report, errs string, flags ...string) (*exec.Cmd, error) {
	args := append([]string{"-json", "-scenario", "fresh-seats", "-c", "64", "-users", "2000"}, flags...)
	return background(ctx, report, errs, "bin/hammer", append(args, "-watch", "-url", "http://"+addr)...)
}

// hammerReport is what the drills read of the hammer's JSON report.
type hammerReport struct {
	Sent             int            `json:"sent"`
	WallMs           float64        `json:"wallMs"`
	ThroughputPerSec float64        `json:"throughputPerSec"`
	Responses        map[string]int `json:"responses"`
	LatencyMs        struct {
		P99 float64 `json:"p99"`
	} `json:"latencyMs"`
	// Unavailable counts the bookings answered 503 unavailable
	// (-allow-unavailable).
	Unavailable int `json:"unavailable"`
	// LongestGapMs is the longest stretch without a booking answered 200;
	// absent when the hammer measured none.
	LongestGapMs *float64 `json:"longestGapMs"`
	Seats        struct {
		WonMoreThanOnce int `json:"wonMoreThanOnce"`
	} `json:"seats"`
	// Acknowledged is the bookings answered 200 read back by their ids.
	Acknowledged *struct {
		Lost      int `json:"lost"`
		Unchecked int `json:"unchecked"`
	} `json:"acknowledged"`
	Watch   *watchReport `json:"watch"`
	Verdict *struct {
		Pass    bool     `json:"pass"`
		Reasons []string `json:"reasons"`
	} `json:"verdict"`
}

// watchReport is what the hammer's watcher saw on the live streams.
type watchReport struct {
	Booked  int      `json:"booked"`
	Matched int      `json:"matched"`
	Missing []string `json:"missing"`
	Resumed int      `json:"resumed"`
	DelayMs struct {
		P99 *float64 `json:"p99"`
	} `json:"delayMs"`
}

// unavailableStatus is the answer a service without a database leader
// gives, the one 5xx a PostgreSQL failover run allows.
const unavailableStatus = "503 unavailable"

// serverErrors counts the answers of status 5xx, but those of the
// statuses left out.
func (r *hammerReport) serverErrors(leftOut ...string) int {
	n := 0
	for status, count := range r.Responses {
		if strings.HasPrefix(status, "5") && !slices.Contains(leftOut, status) {
			n += count
		}
	}
	return n
}

// transportErrors counts the requests that got no answer.
func (r *hammerReport) transportErrors() int { return r.Responses["transport error"] }

// readReport reads the hammer's report from path; an error says there is
// none (the hammer ended before writing it).
func readReport(path string) (*hammerReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New(path + " is empty")
	}
	var r hammerReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if r.Verdict == nil {
		return nil, errors.New(path + " holds no verdict")
	}
	return &r, nil
}
