package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// watch runs the hammer's fresh seats for duration (length as given),
// users users, against
// addr, and prints a line every window; it returns the windows of the
// run but its last, which the hammer's ramp-down may cut short (the
// hammer then verifies what it booked, booking nothing). The hammer's
// report goes to work/hammer.json, the windows to work/windows.
func (s sustainRun) watch(ctx context.Context, h hammer, length string, duration time.Duration, users int, addr string) ([]window, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, err := os.Create(filepath.Join(s.work, "hammer.json"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = out.Close() }()
	record, err := os.Create(filepath.Join(s.work, "windows"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = record.Close() }()
	// -verify=false: reading back the seat maps of the some 600 schedules
	// five minutes book takes the hammer minutes (make compare and make
	// soak verify theirs); the verdict on every answer stands.
	cmd := h.command(ctx, "-json", "-scenario", "fresh-seats", "-duration", length, "-c", "64",
		"-users", fmt.Sprint(users), "-url", "http://"+addr, "-verify=false")
	cmd.Stdout = out
	b0, c0, t0, err := s.sample(ctx)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("hammer: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	logf("sustain", "fresh seats for %s, %d users, on a new database; a line every %d s", length, users, int(windowLen/time.Second))
	fmt.Print("| window | bookings/s | PostgreSQL CPU µs per booking |\n| ---: | ---: | ---: |\n")
	var windows []window
	full := int(duration/windowLen) - 1
	tick := time.NewTicker(windowLen)
	defer tick.Stop()
	hammerErr, running := error(nil), true
	for running && len(windows) < full {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case hammerErr = <-ended:
			running = false
			continue
		case <-tick.C:
		}
		b1, c1, t1, err := s.sample(ctx)
		if err != nil {
			return nil, err
		}
		w := measured(len(windows)+1, b1-b0, c1-c0, t1.Sub(t0))
		windows = append(windows, w)
		_, _ = fmt.Fprintf(record, "%d %.1f %.1f\n", w.n, w.perSecond, w.cpu)
		fmt.Printf("| %d | %.0f | %.1f |\n", w.n, w.perSecond, w.cpu)
		b0, c0, t0 = b1, c1, t1
	}
	if running {
		hammerErr = <-ended
	}
	report, err := os.ReadFile(out.Name())
	if err == nil {
		_, err = readReport(report, hammerErr)
	}
	if err != nil {
		logf("sustain", "%s", err)
		return nil, errFailed
	}
	return windows, nil
}
