// Package headless finds and launches the headless Chromium that drives
// the live seat-map page, in its tests and in tools/pagecheck alike.
package headless

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

// Find returns the Chromium to run: CHROMIUM when set, else Debian's
// chromium (which make test installs).
func Find() (string, error) {
	for _, path := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if path == "" {
			continue
		}
		if _, err := exec.LookPath(path); err == nil {
			return path, nil
		}
	}
	return "", errors.New("no Chromium: install Debian's chromium (go run ./cmd/devenv browser; make test does) or set CHROMIUM")
}

// startTimeout bounds how long Chromium may take to start.
const startTimeout = time.Minute

// NewTab returns a tab of a headless Chromium at path, not yet started
// (the first chromedp.Run on it starts the browser, which then lives as
// long as that Run's context), and a func that quits the browser. The
// flags keep it quiet (no background networking, component updates, sync
// or QUIC) and its window the same size wherever it runs.
func NewTab(ctx context.Context, path string) (tab context.Context, quit func()) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1200, 900),
		// chromedp waits 20 s for the browser to say where it listens;
		// with both cores running tests under -race, Chromium's start
		// took longer once.
		chromedp.WSURLReadTimeout(startTimeout),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	return tab, func() {
		cancelTab()
		cancelAlloc()
	}
}
