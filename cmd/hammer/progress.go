package main

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressAfter is how long a run goes before it shows a progress bar:
// short runs print their report and nothing else.
const progressAfter = 2 * time.Second

// progress returns a tick that draws a bar on out once the run has lasted
// progressAfter: requests done of cfg.N, or seconds of cfg.Duration. finish
// clears it.
func progress(out io.Writer, cfg config) (onTick tick, finish func()) {
	if cfg.N > 0 {
		return progressBar(out, int64(cfg.N), "requests", func(done int64, _ time.Duration) int64 { return done })
	}
	return progressBar(out, int64(cfg.Duration/time.Second), "seconds",
		func(_ int64, elapsed time.Duration) int64 { return int64(elapsed / time.Second) })
}

// progressBar returns a tick that draws a bar of total, described by
// description, on out once the run has lasted progressAfter, at what value
// makes of the tick's figures. finish clears it. Without out (not a
// terminal, or -json) there is no bar: no tick, and nothing to finish.
func progressBar(out io.Writer, total int64, description string, value func(done int64, elapsed time.Duration) int64) (onTick tick, finish func()) {
	if out == nil {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	onTick = func(done int64, elapsed time.Duration) {
		if elapsed < progressAfter {
			return
		}
		if bar == nil {
			bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(out), progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(200*time.Millisecond),
				progressbar.OptionClearOnFinish(), progressbar.OptionSetDescription(description))
		}
		_ = bar.Set64(value(done, elapsed))
	}
	finish = func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
	return onTick, finish
}
