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
	var bar *progressbar.ProgressBar
	onTick = func(done int64, elapsed time.Duration) {
		if elapsed < progressAfter {
			return
		}
		if bar == nil {
			opts := []progressbar.Option{
				progressbar.OptionSetWriter(out), progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(200 * time.Millisecond),
				progressbar.OptionClearOnFinish(),
			}
			if cfg.N > 0 {
				bar = progressbar.NewOptions64(int64(cfg.N), append(opts, progressbar.OptionSetDescription("requests"))...)
			} else {
				bar = progressbar.NewOptions64(int64(cfg.Duration/time.Second),
					append(opts, progressbar.OptionSetDescription("seconds"))...)
			}
		}
		if cfg.N > 0 {
			_ = bar.Set64(done)
		} else {
			_ = bar.Set64(int64(elapsed / time.Second))
		}
	}
	finish = func() {
		if bar != nil {
			_ = bar.Finish()
		}
	}
	return onTick, finish
}
