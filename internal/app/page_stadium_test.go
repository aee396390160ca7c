package app_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The stadium of TestPageDrawsAStadium: 100 sections (101..200) of 20
// rows (A..T) of 40 seats, the first ten of category club.
const (
	stadiumSections = 100
	stadiumRows     = 20
	stadiumPerRow   = 40
	stadiumSeats    = stadiumSections * stadiumRows * stadiumPerRow
)

// stadiumSeat is the id of seat number n (from 1) of row r (from 0) of
// section s (from 0): ids run section by section, row by row.
func stadiumSeat(s, r, n int) int {
	return s*stadiumRows*stadiumPerRow + r*stadiumPerRow + n
}

func (h *harness) createStadium() int64 {
	h.t.Helper()
	sections := make([]map[string]any, stadiumSections)
	for s := range sections {
		rows := make([]map[string]any, stadiumRows)
		for r := range rows {
			rows[r] = row(string(rune('A'+r)), stadiumPerRow)
		}
		category := ""
		if s < 10 {
			category = "club"
		}
		sections[s] = section(strconv.Itoa(101+s), category, rows...)
	}
	return h.createSections(sections...)
}

// stadiumPlace is one seat of the API's seat map.
type stadiumPlace struct {
	id                          int
	label, section, row, status string
}

// seatPlacesOf reads the whole seat map through instance 0, once it has
// every change made so far: the seats by label.
func (h *harness) seatPlacesOf(schedule int64) map[string]stadiumPlace {
	h.t.Helper()
	h.settle(schedule)
	resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats", schedule)})
	if resp.status != http.StatusOK {
		h.t.Fatalf("seat map: %d %.200s", resp.status, resp.raw)
	}
	byLabel := map[string]stadiumPlace{}
	for _, s := range resp.body["seats"].([]any) {
		seat := s.(map[string]any)
		p := stadiumPlace{id: int(seat["seatId"].(float64)), status: seat["status"].(string)}
		p.label, _ = seat["label"].(string)
		p.section, _ = seat["section"].(string)
		p.row, _ = seat["row"].(string)
		byLabel[p.label] = p
	}
	return byLabel
}

// compactStatuses reads the compact seat map through instance 0, once it
// has every change made so far: every seat's status in id order, one
// letter each, as the page's seatmap.statuses() writes them.
func (h *harness) compactStatuses(schedule int64) string {
	h.t.Helper()
	h.settle(schedule)
	resp := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d/seats?form=compact", schedule)})
	if resp.status != http.StatusOK {
		h.t.Fatalf("compact seat map: %d %.200s", resp.status, resp.raw)
	}
	m, _ := compactSeats(h.t, resp.raw)
	var b strings.Builder
	for _, s := range m.Sections {
		for _, r := range s.Rows {
			if r.FirstSeatID != b.Len()+1 {
				h.t.Fatalf("compact seat map: row %s of section %q starts at seat %d, want %d", r.Label, s.Name, r.FirstSeatID, b.Len()+1)
			}
			b.WriteString(r.Status)
		}
	}
	return b.String()
}

// An 80,000-seat stadium opens drawn whole, one canvas per section, the
// seats held and booked before in their colours; a booking through the
// API shows on it; a click on a section zooms to it, drawn as buttons,
// and "Book 4 together" there books four seats side by side in that
// section, which the page then shows booked. The open time is logged,
// not asserted beyond a generous bound: the machine is shared.
func TestPageDrawsAStadium(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	began := time.Now()
	schedule := h.createStadium()
	t.Logf("%d-seat schedule created in %s", stadiumSeats, time.Since(began).Round(time.Millisecond))

	// Before the page opens: one seat booked (102-A1), two held (150-C5, C6).
	booked := stadiumSeat(1, 0, 1)
	if got := h.reserve(0, "alice", schedule, booked); got.status != http.StatusOK {
		t.Fatalf("book 102-A1: %d %s", got.status, got.raw)
	}
	held := []int{stadiumSeat(49, 2, 5), stadiumSeat(49, 2, 6)}
	h.mustHold(0, "dave", schedule, held...)

	ctx := browser(t)
	const wait = 30 * time.Second
	start := time.Now()
	if err := run(t, ctx, wait,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[0], schedule)),
		chromedp.Poll(fmt.Sprintf(`document.body.dataset.schedule === "%d" && document.getElementById("seatmap").dataset.seats === "%d"`,
			schedule, stadiumSeats), nil, chromedp.WithPollingInterval(10*time.Millisecond)),
	); err != nil {
		t.Fatalf("open the page on the %d-seat stadium: %v", stadiumSeats, err)
	}
	seen := time.Since(start)
	var timings map[string]float64
	if err := run(t, ctx, 10*time.Second, chromedp.Poll(`window.seatmap.timings.paintedAt`, nil),
		chromedp.Evaluate(`window.seatmap.timings`, &timings)); err != nil {
		t.Fatal(err)
	}
	// Opened: from the test's navigation to the frame that showed the
	// seats (the page's clock; seen, when the test's polling saw them).
	opened := time.UnixMilli(int64(timings["paintedAt"])).Sub(start)
	form := map[bool]string{true: "compact", false: "full"}[timings["compact"] == 1]
	t.Logf("the page showed the %d seats %s after the navigation began (seen by the test after %s); in the page: snapshot of %.0f KiB (%s form) received at %.0f ms, parsed at %.0f ms, drawn at %.0f ms, painted at %.0f ms",
		stadiumSeats, opened.Round(time.Millisecond), seen.Round(time.Millisecond), timings["bytes"]/1024, form,
		timings["received"], timings["parsed"], timings["drawn"], timings["painted"])
	if form != "compact" {
		t.Errorf("the page's snapshot was the %s seat map (%.0f KiB), want the compact one", form, timings["bytes"]/1024)
	}
	if opened > 15*time.Second {
		t.Errorf("the page took %s to draw %d seats; want well under 15 s (the target is 3 s)", opened, stadiumSeats)
	}

	var shown struct {
		Data     map[string]string `json:"data"`
		Tiles    []string          `json:"tiles"`
		Tile101  string            `json:"tile101"`
		Tile150  string            `json:"tile150"`
		Legend   []string          `json:"legend"`
		Options  []string          `json:"options"`
		Sections int               `json:"sections"`
		Buttons  int               `json:"buttons"`
		Drawn    []string          `json:"drawn"`
		Overflow bool              `json:"overflow"`
	}
	if err := run(t, ctx, 10*time.Second, chromedp.Evaluate(fmt.Sprintf(`(() => {
		const tiles = [...document.querySelectorAll("#sections button.tile")];
		const label = (name) => document.querySelector('#sections button.tile[data-section="' + name + '"]').getAttribute("aria-label");
		return {
			data: { ...document.getElementById("seatmap").dataset },
			tiles: tiles.map(t => t.dataset.section),
			tile101: label("101"),
			tile150: label("150"),
			legend: [...document.querySelectorAll("#categories li")].map(li => li.textContent),
			options: [...document.querySelectorAll("#best-category option")].map(o => o.textContent),
			sections: document.querySelectorAll("#best-section option").length,
			buttons: document.querySelectorAll("button.seat").length,
			drawn: [1, %d, %d, %d, %d].map(id => window.seatmap.drawn(id)),
			overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
		};
	})()`, booked, held[0], held[1], stadiumSeats), &shown)); err != nil {
		t.Fatal(err)
	}
	wantData := map[string]string{"seats": strconv.Itoa(stadiumSeats), "available": strconv.Itoa(stadiumSeats - 3), "held": "2", "reserved": "1", "zoom": ""}
	for k, v := range wantData {
		if shown.Data[k] != v {
			t.Errorf("#seatmap data-%s = %q, want %q", k, shown.Data[k], v)
		}
	}
	if len(shown.Tiles) != stadiumSections || shown.Tiles[0] != "101" || shown.Tiles[stadiumSections-1] != "200" {
		t.Errorf("%d section canvases (%v…), want %d, 101 to 200 in order", len(shown.Tiles), shown.Tiles[:min(3, len(shown.Tiles))], stadiumSections)
	}
	if shown.Tile101 != "Section 101, club, 800 of 800 free" || shown.Tile150 != "Section 150, standard, 798 of 800 free" {
		t.Errorf("sections say %q and %q; want their category and free seats", shown.Tile101, shown.Tile150)
	}
	if !slices.Equal(shown.Legend, []string{"club 7999 of 8000 free", "standard 71998 of 72000 free"}) {
		t.Errorf("legend %q", shown.Legend)
	}
	if !slices.Equal(shown.Options, []string{"any", "club", "standard"}) || shown.Sections != stadiumSections+1 {
		t.Errorf("category choice %q and %d section choices; want any, club, standard and any and the %d sections", shown.Options, shown.Sections, stadiumSections)
	}
	if shown.Buttons != 0 {
		t.Errorf("%d seat buttons in the overview; want the seats on canvases", shown.Buttons)
	}
	if want := []string{"available", "reserved", "held", "held", "available"}; !slices.Equal(shown.Drawn, want) {
		t.Errorf("seats 1, 102-A1, 150-C5, 150-C6 and %d drawn %v, want %v", stadiumSeats, shown.Drawn, want)
	}
	if shown.Overflow {
		t.Error("the overview scrolls sideways")
	}

	// A booking through the API shows on its section's canvas.
	live := stadiumSeat(76, 10, 13) // 177-K13
	start = time.Now()
	if got := h.reserve(0, "erin", schedule, live); got.status != http.StatusOK {
		t.Fatalf("book 177-K13: %d %s", got.status, got.raw)
	}
	if err := pollFor(t, ctx, 15*time.Second, fmt.Sprintf(`window.seatmap.drawn(%d) === "reserved"`, live), nil); err != nil {
		t.Fatalf("177-K13 booked through the API was not drawn reserved: %v", err)
	}
	t.Logf("a booking through the API drawn on the stadium's page after %s", time.Since(start).Round(time.Millisecond))
	keepScreenshot(t, ctx, "seatmap-stadium.png")

	// Zoom to section 150: its seats as buttons, and the section chosen
	// for "Book N together".
	var zoomed struct {
		Zoom, Choice, Title, URL, First string
		Buttons                         int
	}
	if err := run(t, ctx, wait,
		chromedp.Click(`#sections button.tile[data-section="150"]`, chromedp.ByQuery),
		chromedp.WaitVisible(seatSelector(held[1], "held"), chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`({
			Zoom: document.getElementById("seatmap").dataset.zoom,
			Choice: document.getElementById("best-section").value,
			Title: document.getElementById("zoom-title").textContent,
			URL: location.search,
			First: document.querySelector('button.seat[data-seat="%d"]').getAttribute("aria-label"),
			Buttons: document.querySelectorAll("#seats button.seat").length,
		})`, stadiumSeat(49, 0, 1)), &zoomed),
	); err != nil {
		t.Fatalf("zoom to section 150: %v", err)
	}
	if zoomed.Zoom != "150" || zoomed.Choice != "150" || zoomed.Title != "Section 150 · standard" || !strings.Contains(zoomed.URL, "section=150") ||
		zoomed.Buttons != stadiumRows*stadiumPerRow || zoomed.First != "Seat 150-A1, standard, available" {
		t.Errorf("zoomed to section 150: %+v; want it shown alone as %d buttons, chosen for booking, in the address", zoomed, stadiumRows*stadiumPerRow)
	}
	keepScreenshot(t, ctx, "seatmap-stadium-section.png")

	// "Book 4 together" in section 150.
	var msg string
	if err := run(t, ctx, wait,
		chromedp.SendKeys("#token", h.token("carol", ""), chromedp.ByID),
		pick("#best-quantity", "4"),
		chromedp.Poll(`document.getElementById("best").textContent === "Book 4 together"`, nil),
		chromedp.WaitEnabled("#best", chromedp.ByID),
		chromedp.Click("#best", chromedp.ByID),
	); err != nil {
		t.Fatalf("book 4 together in section 150: %v", err)
	}
	if err := pollFor(t, ctx, wait, `(m => /^Booked|failed/.test(m) && m)(document.getElementById("message").textContent)`, &msg); err != nil {
		t.Fatalf("the page never said what it booked: %v", err)
	}
	said := regexp.MustCompile(`^Booked 4 together: (\S+), (\S+), (\S+), (\S+)\.$`).FindStringSubmatch(msg)
	if said == nil {
		t.Fatalf("the page says %q, want \"Booked 4 together: <label>, <label>, <label>, <label>.\"", msg)
	}
	places := h.seatPlacesOf(schedule)
	var ids []int
	for i, label := range said[1:] {
		p, ok := places[label]
		if !ok {
			t.Fatalf("the page says %q: no seat %s in the seat map", msg, label)
		}
		if p.section != "150" || p.row != places[said[1]].row || (i > 0 && p.id != ids[i-1]+1) {
			t.Errorf("booked %s (seat %d, section %s, row %s): want four consecutive seats of one row of section 150", label, p.id, p.section, p.row)
		}
		if p.status != "reserved" || h.activeRows(schedule, p.id) != 1 {
			t.Errorf("seat %s is %s in the seat map with %d reservations, want reserved once", label, p.status, h.activeRows(schedule, p.id))
		}
		ids = append(ids, p.id)
	}
	var actions []chromedp.Action
	for _, id := range ids {
		actions = append(actions, chromedp.WaitVisible(seatSelector(id, "reserved"), chromedp.ByQuery),
			chromedp.Poll(fmt.Sprintf(`window.seatmap.drawn(%d, "overview") === "reserved"`, id), nil))
	}
	if err := run(t, ctx, wait, actions...); err != nil {
		t.Fatalf("%v did not turn reserved on the page: %v", said[1:], err)
	}

	// Back to the overview, which agrees with the compact seat map seat
	// for seat.
	want := h.compactStatuses(schedule)
	var got string
	if err := run(t, ctx, wait,
		chromedp.Click("#overview", chromedp.ByID),
		chromedp.WaitVisible(`#sections button.tile[data-section="150"]`, chromedp.ByQuery),
		chromedp.Poll(fmt.Sprintf(`window.seatmap.statuses() === %s`, jsString(want)), nil),
		chromedp.Evaluate(`window.seatmap.statuses()`, &got),
	); err != nil {
		t.Fatalf("the page does not agree with the seat map (%d seats differ): %v", differing(got, want), err)
	}

	// The address names the section zoomed to: reloaded, the page shows
	// it alone, 177-K13 booked.
	if err := run(t, ctx, wait,
		chromedp.Click(`#sections button.tile[data-section="177"]`, chromedp.ByQuery),
		chromedp.WaitVisible(seatSelector(live, "reserved"), chromedp.ByQuery),
		chromedp.Reload(),
		chromedp.WaitVisible(seatSelector(live, "reserved"), chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("seatmap").dataset.zoom === "177" && document.getElementById("sections").hidden &&
			document.querySelectorAll("#seats button.seat").length === 800`, nil),
	); err != nil {
		t.Fatalf("open the page on section 177: %v", err)
	}
}

// differing counts the seats two status strings disagree on.
func differing(a, b string) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// A section (or a hall) of more seats than buttons are drawn for is drawn
// on one large canvas: the seat under the pointer is named, a click
// selects it, and the page holds it as it does a button's seat.
func TestPageDrawsALargeHallOnACanvas(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	const seatCount = 5000
	schedule := h.createSchedule(seatCount)
	booked := 4321
	if got := h.reserve(0, "alice", schedule, booked); got.status != http.StatusOK {
		t.Fatalf("book A%d: %d %s", booked, got.status, got.raw)
	}
	ctx := browser(t)
	const wait = 30 * time.Second
	if err := run(t, ctx, wait,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[0], schedule)),
		chromedp.Poll(fmt.Sprintf(`document.body.dataset.schedule === "%d" && document.getElementById("seatmap").dataset.seats === "%d"`,
			schedule, seatCount), nil),
	); err != nil {
		t.Fatalf("open the page on %d seats: %v", seatCount, err)
	}
	var shown struct {
		Buttons int      `json:"buttons"`
		Canvas  bool     `json:"canvas"`
		Drawn   []string `json:"drawn"`
	}
	if err := run(t, ctx, 10*time.Second, chromedp.Evaluate(fmt.Sprintf(`({
		buttons: document.querySelectorAll("button.seat").length,
		canvas: !document.getElementById("detail").hidden,
		drawn: [1, %d, %d].map(id => window.seatmap.drawn(id)),
	})`, booked, seatCount), &shown)); err != nil {
		t.Fatal(err)
	}
	if shown.Buttons != 0 || !shown.Canvas || !slices.Equal(shown.Drawn, []string{"available", "reserved", "available"}) {
		t.Errorf("the %d-seat hall: %+v; want it on the canvas, A%d reserved", seatCount, shown, booked)
	}

	// Point at A1234 and click it: named, selected; then hold it.
	const chosen = 1234
	var at struct{ X, Y float64 }
	if err := run(t, ctx, 10*time.Second,
		// First: the keys scroll the token's field into view.
		chromedp.SendKeys("#token", h.token("bob", ""), chromedp.ByID),
		chromedp.Evaluate(fmt.Sprintf(`(() => {
		const p = window.seatmap.point(%d);
		window.scrollBy(0, p.y - innerHeight / 2);
		const q = window.seatmap.point(%d);
		return { X: q.x, Y: q.y };
	})()`, chosen, chosen), &at)); err != nil {
		t.Fatal(err)
	}
	var hover, selected string
	if err := run(t, ctx, wait,
		chromedp.MouseClickXY(at.X, at.Y),
		chromedp.Text("#hover", &hover, chromedp.ByID),
		chromedp.Text("#selection", &selected, chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	wantHover := fmt.Sprintf("A%d · standard · available", chosen)
	if hover != wantHover || selected != fmt.Sprintf("Selected: A%d.", chosen) {
		t.Fatalf("clicked A%d: the page names %q and says %q; want %q and it selected", chosen, hover, selected, wantHover)
	}
	mustRun(t, ctx, wait, fmt.Sprintf("hold A%d from the canvas", chosen),
		chromedp.WaitEnabled("#hold", chromedp.ByID),
		chromedp.Click("#hold", chromedp.ByID),
		chromedp.Poll(fmt.Sprintf(`window.seatmap.drawn(%d) === "held"`, chosen), nil),
	)
	if got := h.seatStatuses(schedule)[chosen]; got != "held" {
		t.Errorf("A%d is %s in the seat map, want held", chosen, got)
	}

	// The keys: the cursor is on the seat clicked last (A1234, held now);
	// two steps right and Enter select A1236.
	if err := run(t, ctx, wait,
		chromedp.Focus("#detail", chromedp.ByID),
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.KeyEvent(kb.Enter),
		chromedp.Text("#hover", &hover, chromedp.ByID),
		chromedp.Text("#selection", &selected, chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	if hover != "A1236 · standard · available" || selected != "Selected: A1236." {
		t.Errorf("right, right, Enter from A1234: the page names %q and says %q; want A1236 named and selected", hover, selected)
	}
	keepScreenshot(t, ctx, "seatmap-large-hall.png")
}
