package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"

	"github.com/seatlock/seatlock/internal/reservation"
)

// FuzzScheduleBodies creates schedules of two rows from arbitrary texts,
// each put into the body as it is (so a quote or a backslash may break the
// JSON, and bytes need not be UTF-8): never a 5xx, and a schedule that is
// created reads back as what a client can parse and store again: a start
// in RFC 3339 within the years 1..9999, texts of valid UTF-8 without
// control characters, labels unique under case folding and untrimmed.
func FuzzScheduleBodies(f *testing.F) {
	for _, seed := range []struct{ title, startsAt, label1, label2, category string }{
		{"Hamlet", "2026-12-24T19:30:00+09:00", "A", "B", "vip"},
		{"Hamlet", "9999-12-31T23:59:59-23:59", "A", "B", "vip"},
		{"Hamlet", "0000-01-01T00:00:00+00:01", "A", "B", "vip"},
		{"Hamlet", "2026-12-24T19:30:00+24:00", "A", "B", "vip"},
		{"Hamlet", "0001-01-01T00:00:00Z", "A", "B", "vip"},
		{"Hamlet", "2026-12-24t19:30:00z", "k", "\u212a", "vip"},
		{"Hamlet", "2026-12-24T19:30:00Z", "A\\n", " A", ""},
		{"Hamlet", "2026-12-24T19:30:00Z", "\u3000B", "A\\t", "v\\u0000"},
		{"Ham\xfflet", "2026-12-24T19:30:00Z", "A", "B", "vip"},
		{"Ham\\ud800let", "2026-12-24T19:30:00Z", "A", "B", "vip"},
		{" Hamlet\\n", "2026-12-24T19:30:00Z", "A", "B", "vip"},
		{"Hamlet\",\"x\":\"", "2026-12-24T19:30:00Z", "A", "B", "vip"},
	} {
		f.Add(seed.title, seed.startsAt, seed.label1, seed.label2, seed.category, 3)
	}
	api := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, title, startsAt, label1, label2, category string, seats int) {
		body := fmt.Sprintf(`{"title":"%s","startsAt":"%s","layout":{"rows":[{"label":"%s","seats":%d,"category":"%s"},{"label":"%s","seats":2}]}}`,
			title, startsAt, label1, seats, category, label2)
		req := httptest.NewRequest(http.MethodPost, "/schedules", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+api.admin)
		rec := api.serve(req)
		checkAnswer(t, rec)
		if rec.Code != http.StatusCreated {
			return
		}
		var created struct {
			Title    string `json:"title"`
			StartsAt string `json:"startsAt"`
			Layout   struct {
				Rows []struct{ Label, Category string }
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
			t.Fatalf("201 body %s: %v", rec.Body, err)
		}
		start, err := time.Parse(time.RFC3339Nano, created.StartsAt)
		if err != nil || start.Before(reservation.EarliestStart) || start.After(reservation.LatestStart) {
			t.Fatalf("body %s: created with startsAt %q (%v)", body, created.StartsAt, err)
		}
		texts := []string{created.Title}
		folded := map[string]bool{}
		for _, r := range created.Layout.Rows {
			texts = append(texts, r.Label, r.Category)
			if r.Label != strings.TrimSpace(r.Label) || strings.ContainsFunc(r.Label, unicode.IsSpace) {
				t.Fatalf("body %s: created with the label %q", body, r.Label)
			}
			key := cases.Fold().String(r.Label)
			if folded[key] {
				t.Fatalf("body %s: created with two labels folding to %q", body, key)
			}
			folded[key] = true
		}
		for _, s := range texts {
			if s == "" || !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
				t.Fatalf("body %s: created with the text %q", body, s)
			}
		}
	})
}

// FuzzHoldBodies asks for holds, by seat ids or best available, with
// arbitrary members put into the body as they are: never a 5xx, and only
// commands the domain accepts reach the use cases (the fakes check).
func FuzzHoldBodies(f *testing.F) {
	for _, seed := range []struct{ seatIDs, quantity, category, adjacent string }{
		{"[1,2]", "", "", ""},
		{"", "2", `"vip"`, "true"},
		{"", "2", `""`, ""},
		{"", "2", "null", ""},
		{"null", "", "", ""},
		{"[1,null]", "", "", ""},
		{"", "11", `"v\u0000"`, "false"},
		{"[1]", "2", "", ""},
		{"", "2", "\"v\xffp\"", ""},
		{"", "2", `"\ud800"`, ""},
	} {
		f.Add(seed.seatIDs, seed.quantity, seed.category, seed.adjacent)
	}
	api := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, seatIDs, quantity, category, adjacent string) {
		members := []string{fmt.Sprintf(`"scheduleId":%d`, fuzzSchedule)}
		for _, m := range []struct{ name, value string }{
			{"seatIds", seatIDs}, {"quantity", quantity}, {"category", category}, {"adjacent", adjacent},
		} {
			if m.value != "" {
				members = append(members, `"`+m.name+`":`+m.value)
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/holds", strings.NewReader("{"+strings.Join(members, ",")+"}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+api.user)
		checkAnswer(t, api.serve(req))
	})
}
