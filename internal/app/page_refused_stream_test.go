package app_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// A stream answered with another status than 200 is given up for good by
// the browser (EventSource), as when a load balancer has no instance ready
// during a restart or an instance has too many streams. The page opens it
// again later, from a fresh snapshot: here the first two tries are
// refused 503 (Chromium's request interception), the third gets the map,
// and a booking made after it shows live.
func TestPageOpensARefusedStreamAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	const seatCount = 30
	schedule := h.createSchedule(seatCount)
	ctx := browser(t)

	const refusals = 2
	tries, refuse := refuseRequests(ctx, "*/seats/events*", refusals)
	began := time.Now()
	if err := run(t, ctx, 30*time.Second,
		refuse,
		chromedp.Navigate(fmt.Sprintf("%s/?schedule=%d", h.bases[0], schedule)),
		chromedp.WaitVisible(seatSelector(seatCount, "available"), chromedp.ByQuery),
	); err != nil {
		var state string
		_ = run(t, ctx, time.Second, chromedp.Text("#connection", &state, chromedp.ByID))
		t.Fatalf("the page did not show the map after %d refused tries of its stream: %v (it says %q)", tries.Load(), err, state)
	}
	if got := tries.Load(); got != refusals+1 {
		t.Errorf("the stream was tried %d times; want %d (refused twice, then open)", got, refusals+1)
	}
	// Reopened after 1 s, then 2 s.
	if took := time.Since(began); took < 3*time.Second {
		t.Errorf("map shown %s after the first try: the refusals were not waited out", took)
	}
	if got := h.reserve(0, "alice", schedule, 4); got.status != http.StatusOK {
		t.Fatalf("book: %d %s", got.status, got.raw)
	}
	if err := run(t, ctx, 10*time.Second,
		chromedp.WaitVisible(seatSelector(4, "reserved"), chromedp.ByQuery),
		chromedp.WaitVisible(`#connection`, chromedp.ByID),
		chromedp.Poll(`document.getElementById("connection").textContent === "live"`, nil),
	); err != nil {
		t.Fatalf("the reopened stream is not live: %v", err)
	}
}

// refuseRequests answers the first refusals requests of the page to URLs
// matching pattern 503 unavailable (Chromium's request interception) and
// lets later ones through; tries counts them all. Run refuse before the
// page sends them.
func refuseRequests(ctx context.Context, pattern string, refusals int32) (tries *atomic.Int32, refuse chromedp.Action) {
	tries = new(atomic.Int32)
	problem := base64.StdEncoding.EncodeToString([]byte(`{"type":"about:blank","title":"Service Unavailable","status":503,"code":"unavailable"}`))
	chromedp.ListenTarget(ctx, func(ev any) {
		paused, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			on := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target)
			if tries.Add(1) <= refusals {
				_ = fetch.FulfillRequest(paused.RequestID, http.StatusServiceUnavailable).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/problem+json"}}).
					WithBody(problem).Do(on)
				return
			}
			_ = fetch.ContinueRequest(paused.RequestID).Do(on)
		}()
	})
	return tries, fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: pattern, RequestStage: fetch.RequestStageRequest}})
}
