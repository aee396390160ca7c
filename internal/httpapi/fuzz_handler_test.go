package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzRequestBodies posts arbitrary bodies, as any content type, to every
// route that reads one: never a 5xx, every refusal a problem, and only
// commands the domain accepts reach the use cases.
func FuzzRequestBodies(f *testing.F) {
	const jsonType = "application/json"
	for _, body := range []string{
		`{"scheduleId":7,"seatId":1}`, `{"SCHEDULEID":7,"seatid":1,"SeatId":2}`, `{"scheduleId":7,"seatId":1,"seatId":2}`,
		`{"scheduleId":7,"seatIds":[1,2]}`, `{"scheduleId":7,"seatIds":[1,1]}`, `{"scheduleId":7,"seatIds":[]}`,
		`{"title":"Dune","startsAt":"2030-01-01T20:00:00Z","seatCount":3}`, `{"title":"Du\u0000ne","startsAt":"2030-01-01T20:00:00Z","seatCount":3}`,
		`{"scheduleId":1e3,"seatId":-1}`, `{"scheduleId":99999999999999999999,"seatId":1}`, `null`, ``, `{`, `{"a":{"b":[{"c":{}}]}}`,
		`{}`, ` {} `, `[]`, `{"":1}`, `{"a":1,"a":2}`,
	} {
		for route := range uint8(4) {
			f.Add(route, jsonType, []byte(body))
		}
	}
	f.Add(uint8(0), "application/json; charset=latin1", []byte(`{"scheduleId":7,"seatId":1}`))
	api := newFuzzAPI(f)
	routes := []struct{ path, token string }{{"/reservations", api.user}, {"/holds", api.user}, {"/schedules", api.admin},
		{"/holds/" + fuzzHoldID + "/extend", api.user}}
	f.Fuzz(func(t *testing.T, route uint8, contentType string, body []byte) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(http.MethodPost, r.path, bytes.NewReader(body))
		req.Header["Content-Type"] = []string{contentType}
		req.Header.Set("Authorization", "Bearer "+r.token)
		checkAnswer(t, api.serve(req))
	})
}

var preferenceApplied = regexp.MustCompile(`^wait=[0-9]+$`)

// booking is a valid booking by the fuzz API's user with one more header,
// sent as is.
func (api *fuzzAPI) booking(header, value string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":7,"seatId":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+api.user)
	req.Header[header] = []string{value}
	return req
}

// FuzzPreferHeader books with an arbitrary Prefer header: the booking
// goes through, with a wait between zero and the cap (checked by the
// fake), and Preference-Applied, when sent, is wait=N within the cap.
func FuzzPreferHeader(f *testing.F) {
	for _, prefer := range []string{
		"wait=3", "WAIT = 3", "wait=99999999999", "wait=-1", "wait=+3", `wait="4"`, "wait=3;x=y", "respond-async, wait=2",
		"wait", "wait=", "wait=1,wait=2", "return=minimal", "wait=0x10", "wait=4294967296", "\x00wait=1",
	} {
		f.Add(prefer)
	}
	api := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, prefer string) {
		rec := api.serve(api.booking("Prefer", prefer))
		checkAnswer(t, rec)
		if rec.Code != http.StatusOK {
			t.Fatalf("Prefer %q: answered %d %s, want 200", prefer, rec.Code, rec.Body)
		}
		applied := rec.Header().Values("Preference-Applied")
		if len(applied) == 0 {
			return
		}
		if len(applied) != 1 || !preferenceApplied.MatchString(applied[0]) {
			t.Fatalf("Prefer %q: Preference-Applied %q", prefer, applied)
		}
		if n, _ := strconv.Atoi(strings.TrimPrefix(applied[0], "wait=")); time.Duration(n)*time.Second > fuzzMaxWait {
			t.Fatalf("Prefer %q: Preference-Applied %q beyond the cap", prefer, applied[0])
		}
	})
}

// FuzzIdempotencyKey books with an arbitrary Idempotency-Key: a key is
// either refused as invalid_idempotency_key or reaches the store as 1 to
// 255 visible ASCII characters (checked by the fake).
func FuzzIdempotencyKey(f *testing.F) {
	for _, key := range []string{
		"9b2f6c0e-1d4a-4c8e-a3f7-5e6d7c8b9a01", `"quoted"`, `""`, `"`, `"a"b"`, `"a\"`, "with space", "tab\there",
		"nul\x00", "ünï", strings.Repeat("k", 255), strings.Repeat("k", 256), `"` + strings.Repeat("k", 255) + `"`,
	} {
		f.Add(key)
	}
	api := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, key string) {
		rec := api.serve(api.booking("Idempotency-Key", key))
		body := checkAnswer(t, rec)
		if rec.Code != http.StatusOK && (rec.Code != http.StatusBadRequest || body["code"] != "invalid_idempotency_key") {
			t.Fatalf("Idempotency-Key %q: answered %d %s, want 200 or 400 invalid_idempotency_key", key, rec.Code, rec.Body)
		}
	})
}

// FuzzPathID asks for schedules and seat maps under arbitrary ids, as a
// server reads them from a request line: only the canonical "7" finds
// the schedule; every other spelling is a 404.
func FuzzPathID(f *testing.F) {
	for _, id := range []string{"7", "+7", "07", "%2B7", "%37", "7%20", "-7", "0", "9223372036854775807",
		"9223372036854775808", "7/seats", "07/seats", "%00", "7?x=1", "７"} {
		f.Add(id)
	}
	api := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, id string) {
		u, err := url.ParseRequestURI("/schedules/" + id)
		if err != nil || strings.HasSuffix(u.Path, "/seats/events") {
			return // refused by the server before any handler; streams are not this target's
		}
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL = u
		req.RequestURI = u.RequestURI()
		rec := api.serve(req)
		checkAnswer(t, rec)
		found := u.EscapedPath() == "/schedules/7" || u.EscapedPath() == "/schedules/7/seats"
		switch {
		case found && rec.Code != http.StatusOK:
			t.Fatalf("GET %s: %d %s, want 200", u.EscapedPath(), rec.Code, rec.Body)
		case !found && rec.Code != http.StatusNotFound:
			t.Fatalf("GET %s: %d %s, want 404", u.EscapedPath(), rec.Code, rec.Body)
		}
	})
}

// The challenges a 401 may carry (RFC 6750).
var challenges = map[string]bool{
	`Bearer realm="seatlock"`: true,
	`Bearer realm="seatlock", error="invalid_token", error_description="the token is invalid"`:  true,
	`Bearer realm="seatlock", error="invalid_token", error_description="the token has expired"`: true,
}

// FuzzAuthorization sends arbitrary Authorization headers: the answer is
// the resource's (here not found) or 401 with one of the three
// challenges, never a word about signatures.
func FuzzAuthorization(f *testing.F) {
	api := newFuzzAPI(f)
	for _, header := range []string{
		"Bearer " + api.user, "bearer " + api.user, "Bearer  " + api.user + " ", "Bearer " + api.user + "x",
		"Bearer", "Bearer ", "Basic YWxpY2U6c2VjcmV0", "Bearer a.b.c", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.", "",
	} {
		f.Add(header)
	}
	f.Fuzz(func(t *testing.T, header string) {
		req := httptest.NewRequest(http.MethodGet, "/reservations/00000000-0000-0000-0000-000000000000", nil)
		req.Header["Authorization"] = []string{header}
		rec := api.serve(req)
		body := checkAnswer(t, rec)
		switch rec.Code {
		case http.StatusNotFound:
		case http.StatusUnauthorized:
			if c := rec.Header().Values("WWW-Authenticate"); len(c) != 1 || !challenges[c[0]] {
				t.Fatalf("Authorization %q: WWW-Authenticate %q", header, c)
			}
			if detail, _ := body["detail"].(string); strings.Contains(strings.ToLower(detail), "signature") {
				t.Fatalf("Authorization %q: detail %q speaks of the signature", header, detail)
			}
		default:
			t.Fatalf("Authorization %q: %d %s, want 404 or 401", header, rec.Code, rec.Body)
		}
	})
}
