package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser the tests drive: CHROMIUM, or Debian's
// chromium, which make test installs. It fails, never skips, without one.
func chromium(t *testing.T) string {
	t.Helper()
	for _, path := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if path == "" {
			continue
		}
		if _, err := exec.LookPath(path); err == nil {
			return path
		}
	}
	t.Fatal("no Chromium: install Debian's chromium package (make test does) or set CHROMIUM")
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1200, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// run runs browser actions, bounded by wait.
func run(t *testing.T, ctx context.Context, wait time.Duration, actions ...chromedp.Action) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

func seatSelector(seat int, status string) string {
	return fmt.Sprintf(`button.seat[data-seat="%d"][data-status="%s"]`, seat, status)
}

// The page on instance B shows a booking made through instance A within
// a second; a user holds, confirms and books from the page; after a burst
// of bookings through both instances the page agrees with the seat map,
// and its screenshot is kept as a test artifact.
func TestPageShowsBookingsLive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	const seatCount = 120
	schedule := h.createSchedule(seatCount)
	ctx := browser(t)

	if err := run(t, ctx, 20*time.Second,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[1], schedule)),
		chromedp.WaitVisible(seatSelector(seatCount, "available"), chromedp.ByQuery),
	); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	var labels []string
	if err := run(t, ctx, 5*time.Second, chromedp.Evaluate(
		`[...document.querySelectorAll("#seats > *")].map(b => b.tagName + ":" + b.getAttribute("aria-label"))`, &labels)); err != nil {
		t.Fatal(err)
	}
	if len(labels) != seatCount || labels[4] != "BUTTON:Seat 5, available" {
		t.Fatalf("seat map markup: %d elements, fifth %q; want %d buttons labelled with their status", len(labels), labels[4], seatCount)
	}

	start := time.Now()
	if got := h.reserve(0, "alice", schedule, 5); got.status != http.StatusOK {
		t.Fatalf("book through A: %d %s", got.status, got.raw)
	}
	if err := run(t, ctx, time.Second, chromedp.WaitVisible(seatSelector(5, "reserved"), chromedp.ByQuery)); err != nil {
		t.Fatalf("seat 5 booked through A did not turn reserved on B's page within 1 s: %v", err)
	}
	t.Logf("booking on A shown on B's page after %s", time.Since(start))

	// A user at the page: token, two seats, hold, confirm; then one-click.
	if err := run(t, ctx, 10*time.Second,
		chromedp.SendKeys("#token", h.token("bob", ""), chromedp.ByID),
		chromedp.Click(seatSelector(7, "available"), chromedp.ByQuery),
		chromedp.Click(seatSelector(8, "available"), chromedp.ByQuery),
		chromedp.WaitEnabled("#hold", chromedp.ByID),
		chromedp.Click("#hold", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(8, "held"), chromedp.ByQuery),
		// Enabled once the page has the hold's answer, which may come
		// after the stream's events.
		chromedp.WaitEnabled("#confirm", chromedp.ByID),
		chromedp.Click("#confirm", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(7, "reserved"), chromedp.ByQuery),
		chromedp.WaitVisible(seatSelector(8, "reserved"), chromedp.ByQuery),
		chromedp.Click(seatSelector(9, "available"), chromedp.ByQuery),
		chromedp.WaitEnabled("#book", chromedp.ByID),
		chromedp.Click("#book", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(9, "reserved"), chromedp.ByQuery),
	); err != nil {
		var msg string
		_ = run(t, ctx, time.Second, chromedp.Text("#message", &msg, chromedp.ByID))
		t.Fatalf("hold, confirm and book from the page: %v (page says %q)", err, msg)
	}
	if n := h.activeRows(schedule, 8); n != 1 {
		t.Errorf("seat 8 has %d reservations after the page confirmed it", n)
	}

	// A burst of bookings through both instances, as a hammer sends them.
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() { h.reserve(i%2, fmt.Sprintf("racer-%d", i), schedule, 10+i%(seatCount-10)) })
	}
	wg.Wait()
	want := h.seatStatuses(schedule)
	var reserved int
	for _, status := range want {
		if status == "reserved" {
			reserved++
		}
	}
	// Generous: a loaded machine renders slowly; a lost event would still
	// leave the count short for good.
	if err := run(t, ctx, 30*time.Second, chromedp.Poll(
		fmt.Sprintf(`document.querySelectorAll('button.seat[data-status="reserved"]').length === %d`, reserved), nil)); err != nil {
		t.Fatalf("the page did not settle on the %d reserved seats of the seat map: %v", reserved, err)
	}
	var screenshot []byte
	if err := run(t, ctx, 10*time.Second, chromedp.FullScreenshot(&screenshot, 100)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", ".data", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "seatmap-after-burst.png")
	if err := os.WriteFile(path, screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KiB), %d seats reserved", strings.TrimPrefix(path, "../../"), len(screenshot)/1024, reserved)
}
