package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seatlock/seatlock/internal/headless"
)

// oneBrowser lets one test drive a browser at a time: with two Chromiums
// (and the DOM events chromedp decodes under -race) on two cores, the
// live check of TestPageShowsBookingsLive (1 s) took 0.4-1 s, 40-150 ms
// alone.
var oneBrowser sync.Mutex

// browser starts a headless Chromium for the test, once no other test
// has one.
func browser(t *testing.T) context.Context {
	t.Helper()
	oneBrowser.Lock()
	t.Cleanup(oneBrowser.Unlock) // after the browser below has quit
	// It fails, never skips, without a Chromium.
	path, err := headless.Find()
	if err != nil {
		t.Fatal(err)
	}
	ctx, quit := headless.NewTab(context.Background(), path)
	t.Cleanup(quit)
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

// mustRun runs browser actions, bounded by wait, and fails the test with
// what, the error and what the page's message says when they fail.
func mustRun(t *testing.T, ctx context.Context, wait time.Duration, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := run(t, ctx, wait, actions...); err != nil {
		var msg string
		_ = run(t, ctx, time.Second, chromedp.Text("#message", &msg, chromedp.ByID))
		t.Fatalf("%s: %v (page says %q)", what, err, msg)
	}
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
		`[...document.querySelectorAll("#seats .row-seats > *")].map(b => b.tagName + ":" + b.getAttribute("aria-label"))`, &labels)); err != nil {
		t.Fatal(err)
	}
	if len(labels) != seatCount || labels[4] != "BUTTON:Seat A5, standard, available" {
		t.Fatalf("seat map markup: %d elements, fifth %q; want %d buttons labelled with their place and status", len(labels), labels[4], seatCount)
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
	mustRun(t, ctx, 10*time.Second, "hold, confirm and book from the page",
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
	)
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
	keepScreenshot(t, ctx, "seatmap-after-burst.png")
	t.Logf("%d seats reserved", reserved)
}

// keepScreenshot saves the whole page in .data/artifacts as name.
func keepScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var screenshot []byte
	if err := run(t, ctx, 20*time.Second, chromedp.FullScreenshot(&screenshot, 100)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", ".data", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d KiB)", strings.TrimPrefix(path, "../../"), len(screenshot)/1024)
}

// pick sets a form control's value as a user's choice would, firing its
// input and change events; it fails when a select has no such option.
func pick(selector, value string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		js := fmt.Sprintf(`(() => {
			const e = document.querySelector(%s);
			e.value = %s;
			e.dispatchEvent(new Event("input", { bubbles: true }));
			e.dispatchEvent(new Event("change", { bubbles: true }));
			return e.value;
		})()`, jsString(selector), jsString(value))
		var got string
		if err := chromedp.Evaluate(js, &got).Do(ctx); err != nil {
			return err
		}
		if got != value {
			return fmt.Errorf("%s: value %q, want %q (no such option?)", selector, got, value)
		}
		return nil
	})
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pollFor waits until expression is truthy in the page and stores its
// value in res, for at most wait.
func pollFor(t *testing.T, ctx context.Context, wait time.Duration, expression string, res any) error {
	t.Helper()
	return run(t, ctx, wait, chromedp.Poll(expression, res, chromedp.WithPollingTimeout(wait)))
}

// seatPlace is one seat of the API's seat map.
type seatPlace struct {
	id                   int
	label, row, category string
	status               string
}

// seatPlaces reads the seat map through instance 0, by seat label.
func (h *harness) seatPlaces(schedule int64) map[string]seatPlace {
	h.t.Helper()
	resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	if resp.status != http.StatusOK {
		h.t.Fatalf("seat map: %d %s", resp.status, resp.raw)
	}
	out := map[string]seatPlace{}
	for _, s := range resp.body["seats"].([]any) {
		seat := s.(map[string]any)
		p := seatPlace{id: int(seat["seatId"].(float64)), status: seat["status"].(string)}
		p.label, _ = seat["label"].(string)
		p.row, _ = seat["row"].(string)
		p.category, _ = seat["category"].(string)
		out[p.label] = p
	}
	return out
}

// pageStatuses reads the seat map the page shows: seat id -> status.
func pageStatuses(t *testing.T, ctx context.Context) map[int]string {
	t.Helper()
	var raw map[string]string
	if err := run(t, ctx, 10*time.Second, chromedp.Evaluate(
		`Object.fromEntries([...document.querySelectorAll("#seats button.seat")].map(b => [b.dataset.seat, b.dataset.status]))`, &raw)); err != nil {
		t.Fatal(err)
	}
	out := make(map[int]string, len(raw))
	for id, status := range raw {
		n, err := strconv.Atoi(id)
		if err != nil {
			t.Fatalf("seat id %q on the page", id)
		}
		out[n] = status
	}
	return out
}

// A 2,000-seat schedule is one row A, wrapped within the window; a
// schedule of rows shows its rows and categories; "Book 2 together" books
// the best two seats, side by side in one row, says which, and the page
// shows them reserved as the API does; asking for more vip seats than are
// left says how many are.
func TestPageBooksBestAvailable(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	const long = 2000
	hall := h.createSchedule(long)
	schedule := h.createLayout(row("A", 6, "vip"), row("B", 8), row("C", 8))
	ctx := browser(t)

	// Generous deadlines throughout: two cores shared with other tests.
	const wait = 30 * time.Second
	if err := run(t, ctx, wait,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[0], hall)),
		chromedp.WaitVisible(seatSelector(long, "available"), chromedp.ByQuery),
	); err != nil {
		t.Fatalf("open the page on %d seats: %v", long, err)
	}
	var big struct {
		Rows     []string `json:"rows"`
		Seats    int      `json:"seats"`
		Lines    int      `json:"lines"`
		Overflow bool     `json:"overflow"`
		Title    string   `json:"title"`
	}
	if err := run(t, ctx, 10*time.Second, chromedp.Evaluate(`(() => {
		const seats = [...document.querySelectorAll("#seats button.seat")];
		return {
			rows: [...document.querySelectorAll("#seats .row-label")].map(e => e.textContent),
			seats: seats.length,
			lines: new Set(seats.map(b => b.getBoundingClientRect().top)).size,
			overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
			title: seats[seats.length - 1].title,
		};
	})()`, &big)); err != nil {
		t.Fatal(err)
	}
	// Wrapped: more than one line, at least 10 seats a line, no sideways
	// scrolling.
	if !slices.Equal(big.Rows, []string{"A"}) || big.Seats != long || big.Lines < 2 || big.Lines > long/10 || big.Overflow ||
		big.Title != "A2000 · standard · available" {
		t.Fatalf("the %d-seat schedule: %+v; want one row A of %d seats wrapped in lines of 10 or more, no overflow, the last titled %q",
			long, big, long, "A2000 · standard · available")
	}

	// The user picks the schedule of rows.
	if err := run(t, ctx, wait,
		pick("#schedule", strconv.FormatInt(schedule, 10)),
		chromedp.WaitVisible(seatSelector(22, "available"), chromedp.ByQuery),
	); err != nil {
		t.Fatalf("pick the schedule of rows: %v", err)
	}
	var shown struct {
		Rows     []string `json:"rows"`
		RowSeats []int    `json:"rowSeats"`
		Legend   []string `json:"legend"`
		Options  []string `json:"options"`
		FirstA   string   `json:"firstA"`
		FirstB   string   `json:"firstB"`
		Outline  []string `json:"outline"`
		Best     string   `json:"best"`
	}
	if err := run(t, ctx, 10*time.Second, chromedp.Evaluate(`(() => {
		const rows = [...document.querySelectorAll("#seats .row")];
		const first = (r) => r.querySelector("button.seat");
		return {
			rows: rows.map(r => r.querySelector(".row-label").textContent),
			rowSeats: rows.map(r => r.querySelectorAll("button.seat").length),
			legend: [...document.querySelectorAll("#categories li")].map(li => li.textContent),
			options: [...document.querySelectorAll("#best-category option")].map(o => o.textContent),
			firstA: first(rows[0]).title + " / " + first(rows[0]).textContent,
			firstB: first(rows[1]).title + " / " + first(rows[1]).textContent,
			outline: rows.map(r => getComputedStyle(first(r)).borderTopColor),
			best: document.getElementById("best").textContent,
		};
	})()`, &shown)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shown.Rows, []string{"A", "B", "C"}) || !slices.Equal(shown.RowSeats, []int{6, 8, 8}) {
		t.Errorf("rows %v of %v seats, want A, B, C of 6, 8, 8", shown.Rows, shown.RowSeats)
	}
	if !slices.Equal(shown.Legend, []string{"vip 6 of 6 free", "standard 16 of 16 free"}) {
		t.Errorf("legend %q, want vip and standard with their free seats", shown.Legend)
	}
	if !slices.Equal(shown.Options, []string{"any", "vip", "standard"}) {
		t.Errorf("category choice %q, want any, vip, standard", shown.Options)
	}
	if shown.FirstA != "A1 · vip · available / 1" || shown.FirstB != "B1 · standard · available / 1" {
		t.Errorf("first seats of A and B: %q, %q; want titled with label, category and status, showing their number", shown.FirstA, shown.FirstB)
	}
	if len(shown.Outline) != 3 || shown.Outline[0] == shown.Outline[1] || shown.Outline[1] != shown.Outline[2] {
		t.Errorf("outline colours of rows A (vip), B, C: %v; want vip's distinct, B and C alike", shown.Outline)
	}
	if shown.Best != "Book 2 together" {
		t.Errorf("best-available button says %q, want %q", shown.Best, "Book 2 together")
	}

	// Token pasted, "Book 2 together".
	var msg string
	if err := run(t, ctx, wait,
		chromedp.SendKeys("#token", h.token("carol", ""), chromedp.ByID),
		chromedp.WaitEnabled("#best", chromedp.ByID),
		chromedp.Click("#best", chromedp.ByID),
	); err != nil {
		t.Fatalf("book 2 together: %v", err)
	}
	if err := pollFor(t, ctx, wait, `(m => /^Booked|failed/.test(m) && m)(document.getElementById("message").textContent)`, &msg); err != nil {
		t.Fatalf("the page never said what it booked: %v", err)
	}
	said := regexp.MustCompile(`^Booked 2 together: ([A-Za-z0-9_-]+), ([A-Za-z0-9_-]+)\.$`).FindStringSubmatch(msg)
	if said == nil {
		t.Fatalf("the page says %q, want \"Booked 2 together: <label>, <label>.\"", msg)
	}
	places := h.seatPlaces(schedule)
	first, second := places[said[1]], places[said[2]]
	if first.id == 0 || second.id == 0 {
		t.Fatalf("the page says %q: no such seats in the seat map", msg)
	}
	if first.row != second.row || second.id != first.id+1 {
		t.Errorf("booked %s (seat %d, row %s) and %s (seat %d, row %s): want consecutive seats of one row",
			first.label, first.id, first.row, second.label, second.id, second.row)
	}
	for _, p := range []seatPlace{first, second} {
		if p.status != "reserved" || h.activeRows(schedule, p.id) != 1 {
			t.Errorf("seat %s is %s in the seat map with %d reservations, want reserved once", p.label, p.status, h.activeRows(schedule, p.id))
		}
	}
	// The stream brings both to the page.
	if err := run(t, ctx, wait,
		chromedp.WaitVisible(seatSelector(first.id, "reserved"), chromedp.ByQuery),
		chromedp.WaitVisible(seatSelector(second.id, "reserved"), chromedp.ByQuery),
	); err != nil {
		t.Fatalf("%s and %s did not turn reserved on the page: %v", first.label, second.label, err)
	}
	api := h.seatStatuses(schedule)
	if page := pageStatuses(t, ctx); !maps.Equal(page, api) {
		t.Errorf("the page shows %v, the seat map says %v", page, api)
	}
	keepScreenshot(t, ctx, "seatmap-best-available.png")

	// 7 vip seats: fewer are left, and the page says how many.
	freeVIP := 0
	for _, p := range h.seatPlaces(schedule) {
		if p.category == "vip" && p.status == "available" {
			freeVIP++
		}
	}
	if err := run(t, ctx, wait,
		pick("#best-quantity", "7"),
		pick("#best-category", "vip"),
		chromedp.WaitEnabled("#best", chromedp.ByID),
		chromedp.Poll(`document.getElementById("best").textContent === "Book 7 together"`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Click("#best", chromedp.ByID),
	); err != nil {
		t.Fatalf("book 7 vip seats together: %v", err)
	}
	if err := pollFor(t, ctx, wait, `(m => /^Booked 7|failed/.test(m) && m)(document.getElementById("message").textContent)`, &msg); err != nil {
		t.Fatalf("the page never answered the 7 vip seats: %v", err)
	}
	want := fmt.Sprintf("Book 7 together failed: %d vip seats are available, not 7 together. ", freeVIP)
	if !strings.HasPrefix(msg, want) || !strings.HasSuffix(msg, "Nothing was held.") {
		t.Errorf("the page says %q, want %q and the problem's detail", msg, want)
	}
}
