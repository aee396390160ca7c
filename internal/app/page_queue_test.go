package app_test

import (
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A buyer who opens a schedule whose sale has a queue sees their place in
// line and the wait, live, in the page's waiting room instead of the
// booking controls; once admitted, the controls come back and a hold from
// the page carries the admission, without which the service refuses it
// (403 admission_required). A queue put on after the page looked for one
// is joined when a booking is refused for want of an admission, and the
// booking made again goes through.
func TestPageWaitsInTheQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	const seatCount = 20
	schedule := h.createSchedule(seatCount)
	later := h.createSchedule(seatCount)
	third := h.createSchedule(seatCount) // listed when the page loads
	// One buyer admitted at a time: the next is let in when the one
	// before leaves, so the test sets the pace, not the clock.
	h.openQueue(schedule, 2, `,"maxActive":1`)
	ahead := []string{"ahead-0", "ahead-1", "ahead-2", "ahead-3"}
	tickets := make([]string, len(ahead))
	for i, user := range ahead {
		tickets[i] = h.mustJoin(0, user, schedule)
	}
	h.admission(ahead[0], tickets[0], 10*time.Second)
	expectProblem(t, h.reserve(0, "buyer", schedule, 3), http.StatusForbidden, "admission_required")
	leave := func(i int) {
		t.Helper()
		resp := h.do(request{method: http.MethodDelete, path: "/queue/" + tickets[i], token: h.token(ahead[i], "")})
		if resp.status != http.StatusNoContent {
			t.Fatalf("%s leaves: %d %s", ahead[i], resp.status, resp.raw)
		}
	}
	ctx := browser(t)

	// Generous bounds: two cores shared with other tests. A position is
	// read at most every 0.5 s, an admission given at most 0.5 s late.
	const wait = 20 * time.Second
	type queueView struct {
		State    string `json:"state"`
		Position int    `json:"position"`
		Text     string `json:"text"`
		Panel    bool   `json:"panel"`
		Booking  bool   `json:"booking"`
		Live     string `json:"live"`
	}
	const readQueue = `(() => {
		const q = window.seatmap.queue();
		return {
			state: q.state || "", position: q.position || 0,
			text: document.getElementById("queue-status").textContent,
			panel: !document.getElementById("queue").hidden,
			booking: !document.getElementById("actions").hidden && !document.getElementById("best-controls").hidden,
			live: document.getElementById("queue-status").getAttribute("aria-live") || "",
		};
	})()`
	var view queueView
	if err := run(t, ctx, wait,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[0], schedule)),
		chromedp.WaitVisible(seatSelector(seatCount, "available"), chromedp.ByQuery),
		chromedp.SendKeys("#token", h.token("buyer", ""), chromedp.ByID),
		chromedp.Poll(`window.seatmap.queue().position === 4`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Evaluate(readQueue, &view),
	); err != nil {
		t.Fatalf("the page did not show the buyer 4th in line: %v", err)
	}
	// Behind the one admitted, the wait is an estimate from the
	// admissions measured lately, or unknown when there were none.
	estimate := regexp.MustCompile(`^You are in the queue: position (\d+)(, about \d+ (s|min)\.|; your turn comes when a buyer let in before you finishes\.)$`)
	if m := estimate.FindStringSubmatch(view.Text); view.State != "waiting" || m == nil || m[1] != "4" || !view.Panel || view.Booking ||
		view.Live != "polite" {
		t.Fatalf("waiting 4th: %+v; want the waiting room shown (aria-live polite) with the position and the wait, the booking controls hidden", view)
	}
	keepScreenshot(t, ctx, "seatmap-queue.png")

	// The one admitted leaves: everyone moves up one, live.
	leave(0)
	if err := run(t, ctx, wait,
		chromedp.Poll(`document.getElementById("queue").dataset.position === "3"`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Evaluate(readQueue, &view),
	); err != nil {
		t.Fatalf("the page did not move the buyer up to 3rd: %v", err)
	}
	if m := estimate.FindStringSubmatch(view.Text); m == nil || m[1] != "3" || !view.Panel || view.Booking {
		t.Fatalf("waiting 3rd: %+v", view)
	}

	// Everyone ahead leaves: the buyer is admitted, the waiting room goes
	// and a hold from the page (with the admission) goes through.
	for i := 1; i < len(ahead); i++ {
		leave(i)
	}
	if err := run(t, ctx, wait,
		chromedp.Poll(`window.seatmap.queue().admitted && document.getElementById("queue").hidden`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Evaluate(readQueue, &view),
	); err != nil {
		t.Fatalf("the page did not let the buyer in: %v", err)
	}
	if view.State != "admitted" || view.Panel || !view.Booking {
		t.Fatalf("admitted: %+v; want the waiting room gone, the booking controls back", view)
	}
	var requests struct {
		Streams int `json:"streams"`
		Polls   int `json:"polls"`
	}
	if err := run(t, ctx, wait, chromedp.Evaluate(`(() => {
		const paths = performance.getEntriesByType("resource").map(e => new URL(e.name).pathname);
		return {
			streams: paths.filter(p => /^\/queue\/[^/]+\/events$/.test(p)).length,
			polls: paths.filter(p => /^\/queue\/[^/]+$/.test(p)).length,
		};
	})()`, &requests)); err != nil {
		t.Fatal(err)
	}
	if requests.Streams < 1 {
		t.Errorf("the page followed its ticket with %d streams (and %d reads of it); want the stream", requests.Streams, requests.Polls)
	}
	t.Logf("followed the ticket with %d streams and %d reads", requests.Streams, requests.Polls)
	mustRun(t, ctx, wait, "hold and confirm once admitted",
		chromedp.Click(seatSelector(5, "available"), chromedp.ByQuery),
		chromedp.WaitEnabled("#hold", chromedp.ByID),
		chromedp.Click("#hold", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(5, "held"), chromedp.ByQuery),
		chromedp.WaitEnabled("#confirm", chromedp.ByID),
		chromedp.Click("#confirm", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(5, "reserved"), chromedp.ByQuery),
	)
	if n := h.activeRows(schedule, 5); n != 1 {
		t.Errorf("seat 5 has %d reservations after the page booked it", n)
	}

	// Another schedule, with no queue when the page looks for one; a
	// queue is put on; a booking from the page is refused for want of an
	// admission, so the page joins, is let in at once, and the booking
	// made again goes through.
	if err := run(t, ctx, wait,
		pick("#schedule", strconv.FormatInt(later, 10)),
		chromedp.WaitVisible(seatSelector(seatCount, "available"), chromedp.ByQuery),
		chromedp.Poll(`window.seatmap.queue().state === null`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Evaluate(readQueue, &view),
	); err != nil {
		t.Fatalf("pick a schedule with no queue: %v", err)
	}
	if view.Panel || !view.Booking {
		t.Fatalf("no queue: %+v; want no waiting room, the booking controls shown", view)
	}
	h.openQueue(later, 10, "")
	var msg string
	if err := run(t, ctx, wait,
		chromedp.Click(seatSelector(7, "available"), chromedp.ByQuery),
		chromedp.WaitEnabled("#book", chromedp.ByID),
		chromedp.Click("#book", chromedp.ByID),
		chromedp.Poll(`window.seatmap.queue().admitted`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Text("#message", &msg, chromedp.ByID),
	); err != nil {
		t.Fatalf("a booking refused for want of an admission did not get the page one: %v", err)
	}
	if !regexp.MustCompile(`^It is your turn: you may hold and book seats until .+\.$`).MatchString(msg) {
		t.Errorf("once admitted the page says %q", msg)
	}
	if joined := h.join(0, "buyer", later); joined.status != http.StatusOK || str(joined.body, "state") != "admitted" {
		t.Fatalf("the buyer's place in the later queue: %d %s; want the page's, admitted", joined.status, joined.raw)
	}
	mustRun(t, ctx, wait, "book again once admitted",
		chromedp.WaitEnabled("#book", chromedp.ByID),
		chromedp.Click("#book", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(7, "reserved"), chromedp.ByQuery),
	)
	if n := h.activeRows(later, 7); n != 1 {
		t.Errorf("seat 7 has %d reservations after the page booked it", n)
	}

	// A third schedule, whose ticket stream the browser cannot open
	// (refused 503, by Chromium's request interception): the page gives
	// the stream up after three tries and asks for the ticket at its
	// Retry-After instead, until it is let in.
	h.openQueue(third, 2, `,"maxActive":1`)
	first := h.mustJoin(0, "ahead-x", third)
	h.admission("ahead-x", first, 10*time.Second)
	refused, refuse := refuseRequests(ctx, "*/queue/*/events*", math.MaxInt32)
	if err := run(t, ctx, wait,
		refuse,
		pick("#schedule", strconv.FormatInt(third, 10)),
		chromedp.Poll(`window.seatmap.queue().position === 1`, nil, chromedp.WithPollingTimeout(wait)),
	); err != nil {
		t.Fatalf("the page did not show the buyer first in the third queue: %v", err)
	}
	for deadline := time.Now().Add(wait); refused.Load() < 3; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page tried the refused stream %d times in %s; want 3", refused.Load(), wait)
		}
	}
	gone := h.do(request{method: http.MethodDelete, path: "/queue/" + first, token: h.token("ahead-x", "")})
	if gone.status != http.StatusNoContent {
		t.Fatalf("ahead-x leaves: %d %s", gone.status, gone.raw)
	}
	mustRun(t, ctx, wait, "admitted by polling, then book",
		chromedp.Poll(`window.seatmap.queue().admitted && document.getElementById("queue").hidden`, nil, chromedp.WithPollingTimeout(wait)),
		chromedp.Click(seatSelector(9, "available"), chromedp.ByQuery),
		chromedp.WaitEnabled("#book", chromedp.ByID),
		chromedp.Click("#book", chromedp.ByID),
		chromedp.WaitVisible(seatSelector(9, "reserved"), chromedp.ByQuery),
	)
	if got := refused.Load(); got != 3 {
		t.Errorf("the refused stream was tried %d times; want 3, then reads of the ticket", got)
	}
}
