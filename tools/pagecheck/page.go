package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/seatlock/seatlock/internal/headless"
)

// Bounds of the browser's steps: generous, because Chromium shares two
// cores with three instances, HAProxy, Redis and PostgreSQL.
const (
	browserStartTimeout = 30 * time.Second
	pageOpenTimeout     = 30 * time.Second
	pageBookTimeout     = 30 * time.Second
	pageReadTimeout     = 10 * time.Second
)

// startBrowser starts headless Chromium as the page's tests do
// (internal/headless) and returns its tab and a func that quits it.
func startBrowser(ctx context.Context) (context.Context, func(), error) {
	path, err := headless.Find()
	if err != nil {
		return nil, nil, err
	}
	tab, quit := headless.NewTab(ctx, path)
	// The first Run starts the browser, which lives as long as that Run's
	// context: so not a context with a timeout, but a timer beside it.
	started := make(chan error, 1)
	go func() { started <- chromedp.Run(tab) }()
	select {
	case err := <-started:
		if err != nil {
			quit()
			return nil, nil, fmt.Errorf("start Chromium (%s): %w", path, err)
		}
	case <-time.After(browserStartTimeout):
		quit()
		return nil, nil, fmt.Errorf("chromium (%s) did not start within %s", path, browserStartTimeout)
	}
	return tab, quit, nil
}

// run runs browser actions, bounded by wait.
func run(tab context.Context, wait time.Duration, actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(tab, wait)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

// streamProbe runs in the page before its own script: it wraps
// EventSource to count what the page's live stream goes through, which
// the page itself does not keep (it only shows "live" or "reconnecting").
const streamProbe = `(() => {
	const Native = window.EventSource;
	const stats = { opens: 0, errors: 0, snapshots: 0, resyncs: 0, seatEvents: 0, lastEventId: "" };
	window.__pagecheck = { stats, source: null };
	window.EventSource = class extends Native {
		constructor(url, init) {
			super(url, init);
			window.__pagecheck.source = this;
			this.addEventListener("open", () => { stats.opens++; });
			this.addEventListener("error", () => { stats.errors++; });
			this.addEventListener("snapshot", (e) => { stats.snapshots++; stats.lastEventId = e.lastEventId; });
			this.addEventListener("seat", (e) => { stats.seatEvents++; stats.lastEventId = e.lastEventId; });
			this.addEventListener("resync", () => { stats.resyncs++; });
		}
	};
})()`

// streamStats is what streamProbe counted, and the stream's state now.
type streamStats struct {
	// Opens counts connections made (the first and every reconnection);
	// Errors, connections that ended or failed; Snapshots, whole seat
	// maps received (1 when every reconnection resumed by Last-Event-ID).
	Opens       int    `json:"opens"`
	Errors      int    `json:"errors"`
	Snapshots   int    `json:"snapshots"`
	Resyncs     int    `json:"resyncs"`
	SeatEvents  int    `json:"seatEvents"`
	LastEventID string `json:"lastEventId"`
	// ReadyState is the newest EventSource's: 0 connecting, 1 open, 2
	// closed for good (the browser gave up reconnecting).
	ReadyState int `json:"readyState"`
	// Connection is what the page says of its stream ("live", ...).
	Connection string `json:"connection"`
}

func readStreamStats(tab context.Context) (streamStats, error) {
	var s streamStats
	err := run(tab, pageReadTimeout, chromedp.Evaluate(`({
		...window.__pagecheck.stats,
		readyState: window.__pagecheck.source ? window.__pagecheck.source.readyState : -1,
		connection: document.getElementById("connection").textContent,
	})`, &s))
	return s, err
}

func seatSelector(seat int, status string) string {
	return fmt.Sprintf(`button.seat[data-seat="%d"][data-status="%s"]`, seat, status)
}

// openPage opens the schedule's page, waits until every one of its seats
// shows available, and pastes the user's token as a user would.
func openPage(tab context.Context, base string, schedule int64, seats int, token string) error {
	err := run(tab, pageOpenTimeout,
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(streamProbe).Do(ctx)
			return err
		}),
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", base, schedule)),
		// The page may fall back to another schedule when it does not
		// list ours: check which one it shows.
		chromedp.Poll(fmt.Sprintf(`document.body.dataset.schedule === "%d" &&
			document.querySelectorAll('button.seat[data-status="available"]').length === %d`, schedule, seats), nil),
		chromedp.WaitVisible(seatSelector(seats, "available"), chromedp.ByQuery),
		chromedp.SendKeys("#token", token, chromedp.ByID),
	)
	if err != nil {
		return fmt.Errorf("open the page on schedule %d with its %d seats available: %w%s", schedule, seats, err, pageSays(tab))
	}
	return nil
}

// bookTogether clicks "Book 2 together" and returns the labels of the
// seats the page says it booked.
func bookTogether(tab context.Context) ([]string, error) {
	var msg string
	err := run(tab, pageBookTimeout,
		chromedp.WaitEnabled("#best", chromedp.ByID),
		chromedp.Poll(`document.getElementById("best").textContent === "Book 2 together"`, nil),
		chromedp.Click("#best", chromedp.ByID),
		chromedp.Poll(`(m => /^Booked|failed/.test(m) && m)(document.getElementById("message").textContent)`, &msg),
	)
	if err != nil {
		return nil, fmt.Errorf("book 2 together from the page: %w%s", err, pageSays(tab))
	}
	said := regexp.MustCompile(`^Booked 2 together: ([A-Za-z0-9_-]+), ([A-Za-z0-9_-]+)\.$`).FindStringSubmatch(msg)
	if said == nil {
		return nil, fmt.Errorf("book 2 together from the page: the page says %q", msg)
	}
	return said[1:], nil
}

// pageSays is the page's message line, for an error, if it has one.
func pageSays(tab context.Context) string {
	var msg string
	if run(tab, 2*time.Second, chromedp.Text("#message", &msg, chromedp.ByID)) != nil || msg == "" {
		return ""
	}
	return fmt.Sprintf(" (the page says %q)", msg)
}

// pageStatuses reads the seat map the page shows: seat id -> status.
func pageStatuses(tab context.Context) (map[int]string, error) {
	var raw map[string]string
	if err := run(tab, pageReadTimeout, chromedp.Evaluate(
		`Object.fromEntries([...document.querySelectorAll("#seats button.seat")].map(b => [b.dataset.seat, b.dataset.status]))`, &raw)); err != nil {
		return nil, fmt.Errorf("read the page's seats: %w", err)
	}
	out := make(map[int]string, len(raw))
	for id, status := range raw {
		n, err := strconv.Atoi(id)
		if err != nil {
			return nil, fmt.Errorf("the page shows a seat %q", id)
		}
		out[n] = status
	}
	return out, nil
}
