package app_test

import (
	"fmt"
	"net/http"
	"testing"
)

func TestScheduleListPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	var ids []int64
	for range 5 {
		ids = append(ids, h.createSchedule(10))
	}
	page := func(query string) response {
		t.Helper()
		return h.do(request{method: http.MethodGet, path: "/schedules" + query})
	}
	idsOf := func(resp response) []int64 {
		t.Helper()
		if resp.status != http.StatusOK {
			t.Fatalf("list: %d %s", resp.status, resp.raw)
		}
		var out []int64
		for _, s := range resp.body["schedules"].([]any) {
			out = append(out, int64(s.(map[string]any)["id"].(float64)))
		}
		return out
	}
	first := page("?limit=2")
	if got := idsOf(first); fmt.Sprint(got) != fmt.Sprint([]int64{ids[4], ids[3]}) {
		t.Fatalf("first page = %v, want the two newest %v", got, []int64{ids[4], ids[3]})
	}
	next := int64(first.body["next"].(float64))
	second := page(fmt.Sprintf("?limit=2&after=%d", next))
	if got := idsOf(second); fmt.Sprint(got) != fmt.Sprint([]int64{ids[2], ids[1]}) {
		t.Errorf("second page = %v", got)
	}
	last := page(fmt.Sprintf("?limit=2&after=%d", int64(second.body["next"].(float64))))
	if got := idsOf(last); fmt.Sprint(got) != fmt.Sprint([]int64{ids[0]}) || last.body["next"] != nil {
		t.Errorf("last page = %v, next %v; want [%d] and next null", got, last.body["next"], ids[0])
	}
	if got := idsOf(page("")); len(got) != 5 {
		t.Errorf("default page has %d schedules, want all 5", len(got))
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?limit=x", "?after=0", "?after=-3", "?after=x", "?limit=1&limit=2"} {
		expectProblem(t, page(q), http.StatusUnprocessableEntity, "validation_failed")
	}

	one := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d", ids[2])})
	if one.status != http.StatusOK || int64(one.body["id"].(float64)) != ids[2] || one.body["seatCount"] != float64(10) {
		t.Errorf("GET schedule: %d %s", one.status, one.raw)
	}
	for _, path := range []string{"/schedules/999999999999", "/schedules/abc", "/schedules/0"} {
		expectProblem(t, h.do(request{method: http.MethodGet, path: path}), http.StatusNotFound, "schedule_not_found")
	}
}

func TestSeatMapETag(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(3)
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	first := h.do(request{method: http.MethodGet, path: path})
	etag := first.header.Get("ETag")
	if first.status != http.StatusOK || len(etag) < 10 || etag[0] != '"' {
		t.Fatalf("seat map: %d, ETag %q", first.status, etag)
	}
	if cc := first.header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q, want no-cache (revalidate with the ETag)", cc)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		got := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": inm}})
		if got.status != http.StatusNotModified || got.raw != "" || got.header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d %q ETag %q, want 304 without a body", inm, got.status, got.raw, got.header.Get("ETag"))
		}
	}
	h.reserve(0, "alice", schedule, 2)
	changed := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": etag}})
	if changed.status != http.StatusOK || changed.header.Get("ETag") == etag {
		t.Errorf("after a booking: %d with ETag %q, want 200 with a new tag", changed.status, changed.header.Get("ETag"))
	}
	h.hold(0, "bob", schedule, 3)
	held := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"If-None-Match": changed.header.Get("ETag")}})
	if held.status != http.StatusOK {
		t.Errorf("after a hold: %d, want 200 with the new map", held.status)
	}
	if got := h.seatStatuses(schedule); got[1] != "available" || got[2] != "reserved" || got[3] != "held" {
		t.Errorf("seat map = %v", got)
	}
}
