package app_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatlock/seatlock/internal/auth"
)

// countRows counts the rows of a table the requests under test must not
// have touched.
func (h *harness) countRows(table string) int {
	h.t.Helper()
	var n int
	if err := h.pool.QueryRow(h.t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// signedToken signs claims with the service's secret, bypassing Mint's
// checks, as a client holding a leaked or hand-made token could.
func signedToken(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Member names match exactly and once: a body that encoding/json alone
// would read case-insensitively, or with the last of two values, is
// refused with the member named, and nothing is booked.
func TestJSONMembersMatchExactlyAndOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := strconv.FormatInt(h.createSchedule(5), 10)
	alice, admin := h.token("alice", ""), h.token("admin", auth.RoleAdmin)
	tests := []struct {
		name, path, token, body string
		detail                  []string
	}{
		{"names in another case", "/reservations", alice, `{"SCHEDULEID":` + schedule + `,"seatid":1,"SeatId":2}`, []string{`"SCHEDULEID"`, "case-sensitive"}},
		{"one name in another case", "/reservations", alice, `{"scheduleId":` + schedule + `,"SeatId":2}`, []string{`"SeatId"`, `"seatId"`}},
		{"duplicate seat", "/reservations", alice, `{"scheduleId":` + schedule + `,"seatId":1,"seatId":2}`, []string{`"seatId"`, "more than once"}},
		{"duplicate through an escape", "/reservations", alice, `{"scheduleId":` + schedule + `,"seatId":1,"seat\u0049d":2}`, []string{`"seatId"`, "more than once"}},
		{"unknown member", "/reservations", alice, `{"scheduleId":` + schedule + `,"seatId":1,"userId":"bob"}`, []string{`"userId"`}},
		{"syntax error", "/reservations", alice, `{"scheduleId":` + schedule + `,,"seatId":1}`, []string{"byte offset"}},
		{"trailing data", "/reservations", alice, `{"scheduleId":` + schedule + `,"seatId":1} {}`, []string{"byte offset"}},
		{"wrong type", "/reservations", alice, `{"scheduleId":` + schedule + `,"seatId":"1"}`, []string{`"seatId"`, "an integer"}},
		{"hold, duplicate list", "/holds", alice, `{"scheduleId":` + schedule + `,"seatIds":[1],"seatIds":[2]}`, []string{`"seatIds"`, "more than once"}},
		{"hold, name in another case", "/holds", alice, `{"scheduleId":` + schedule + `,"SeatIDs":[1]}`, []string{`"SeatIDs"`, `"seatIds"`}},
		{"schedule, duplicate title", "/schedules", admin, `{"title":"A","title":"B","startsAt":"2026-12-24T19:30:00Z","seatCount":3}`, []string{`"title"`, "more than once"}},
		{"schedule, name in another case", "/schedules", admin, `{"Title":"A","startsAt":"2026-12-24T19:30:00Z","seatCount":3}`, []string{`"Title"`, `"title"`}},
	}
	schedulesBefore := h.countRows("schedules")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: tt.path, token: tt.token, contentType: "application/json", body: tt.body})
			expectProblem(t, resp, http.StatusBadRequest, "malformed_json")
			detail, _ := resp.body["detail"].(string)
			for _, want := range tt.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail %q does not say %s", detail, want)
				}
			}
		})
	}
	if n := h.countRows("reservations") + h.countRows("holds"); n != 0 {
		t.Errorf("%d reservations and holds stored after refused bodies, want 0", n)
	}
	if n := h.countRows("schedules"); n != schedulesBefore {
		t.Errorf("schedules = %d after refused bodies, want %d", n, schedulesBefore)
	}
}

// Every resource has one path: an id written any other way is not found.
func TestPathIDsMustBeCanonical(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	id := h.createSchedule(3)
	canonical := strconv.FormatInt(id, 10)
	if resp := h.do(request{method: http.MethodGet, path: "/schedules/" + canonical}); resp.status != http.StatusOK {
		t.Fatalf("GET /schedules/%s: %d %s", canonical, resp.status, resp.raw)
	}
	for _, spelling := range []string{
		"+" + canonical, "0" + canonical, "%2B" + canonical, "%30" + canonical, "%3" + canonical[:1] + canonical[1:],
		canonical + "%20", "%20" + canonical, "-" + canonical, "0", "00", "9223372036854775808", "99999999999999999999",
		canonical + ".0", "1e3", "%00", canonical + "%00",
	} {
		for _, suffix := range []string{"", "/seats"} {
			path := "/schedules/" + spelling + suffix
			expectProblem(t, h.do(request{method: http.MethodGet, path: path}), http.StatusNotFound, "schedule_not_found")
		}
	}

	alice := h.token("alice", "")
	booked := h.reserve(0, "alice", id, 1)
	if booked.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", booked.status, booked.raw)
	}
	resID := booked.body["id"].(string)
	if resp := h.do(request{method: http.MethodGet, path: "/reservations/" + strings.ToUpper(resID), token: alice}); resp.status != http.StatusOK {
		t.Errorf("GET an upper-case reservation id: %d %s, want 200 (hex digits in either case)", resp.status, resp.raw)
	}
	for _, spelling := range []string{
		"{" + resID + "}", "urn:uuid:" + resID, strings.ReplaceAll(resID, "-", ""), resID + "%20", "%20" + resID,
	} {
		expectProblem(t, h.do(request{method: http.MethodGet, path: "/reservations/" + spelling, token: alice}),
			http.StatusNotFound, "reservation_not_found")
		expectProblem(t, h.do(request{method: http.MethodDelete, path: "/reservations/" + spelling, token: alice}),
			http.StatusNotFound, "reservation_not_found")
		expectProblem(t, h.do(request{method: http.MethodGet, path: "/holds/" + spelling, token: alice}),
			http.StatusNotFound, "hold_not_found")
	}
	if got := h.do(request{method: http.MethodGet, path: "/reservations/" + resID, token: alice}); got.body["status"] != "active" {
		t.Errorf("reservation after refused cancels: %d %s, want still active", got.status, got.raw)
	}
	// A query id is held to the same spelling.
	resp := h.do(request{method: http.MethodGet, path: "/schedules?after=%2B" + canonical})
	expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
}

// Control characters never reach PostgreSQL, which refuses NUL in text:
// in a token's sub they make the token invalid (401), in a text field
// they fail validation (422, the field named). Nothing is stored.
func TestControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(2)
	future := time.Now().Add(time.Hour).Unix()
	for _, sub := range []string{"al\x00ice", "alice\n", "\x1b[2J", "alice\u0085"} {
		token := signedToken(t, jwt.MapClaims{"sub": sub, "exp": future})
		resp := h.do(request{method: http.MethodPost, path: "/reservations", token: token, contentType: "application/json",
			body: fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)})
		expectProblem(t, resp, http.StatusUnauthorized, "unauthorized")
		if got := resp.header.Get("WWW-Authenticate"); !strings.Contains(got, `error_description="the token is invalid"`) {
			t.Errorf("sub %q: WWW-Authenticate %q, want the token is invalid", sub, got)
		}
		resp = h.do(request{method: http.MethodGet, path: "/reservations/00000000-0000-0000-0000-000000000000", token: token})
		expectProblem(t, resp, http.StatusUnauthorized, "unauthorized")
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("rows = %d after refused tokens, want 0", n)
	}

	admin := h.token("admin", auth.RoleAdmin)
	before := h.countRows("schedules")
	for _, title := range []string{"Du\x00ne", "Du\nne", "Dune\x7f", "Du\u009bne"} {
		resp := h.postJSON("/schedules", admin, map[string]any{"title": title, "startsAt": "2026-12-24T19:30:00Z", "seatCount": 3})
		expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(resp.raw, `"field":"title"`) {
			t.Errorf("title %q: %s does not name the title", title, resp.raw)
		}
	}
	if n := h.countRows("schedules"); n != before {
		t.Errorf("schedules = %d after refused titles, want %d", n, before)
	}
	// White space around a title is trimmed, as before, not refused.
	resp := h.postJSON("/schedules", admin, map[string]any{"title": "\tDune\n", "startsAt": "2026-12-24T19:30:00Z", "seatCount": 3})
	if resp.status != http.StatusCreated || resp.body["title"] != "Dune" {
		t.Errorf("title with white space around it: %d %s, want 201 Dune", resp.status, resp.raw)
	}
}

// A refused token says expired or invalid (RFC 6750), and never why a
// signature failed; a request without a token gets a challenge without
// an error code.
func TestUnauthorizedSaysExpiredOrInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	future, past := time.Now().Add(time.Hour).Unix(), time.Now().Add(-time.Minute).Unix()
	wrongKey, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": future}).
		SignedString([]byte("an-entirely-different-secret-key!!"))
	if err != nil {
		t.Fatal(err)
	}
	expiredWrongKey, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": past}).
		SignedString([]byte("an-entirely-different-secret-key!!"))
	if err != nil {
		t.Fatal(err)
	}
	const (
		noToken = `Bearer realm="seatlock"`
		invalid = `Bearer realm="seatlock", error="invalid_token", error_description="the token is invalid"`
		expired = `Bearer realm="seatlock", error="invalid_token", error_description="the token has expired"`
	)
	tests := []struct {
		name, authorization, challenge, detail string
	}{
		{"no header", "", noToken, "required"},
		{"another scheme", "Basic YWxpY2U6c2VjcmV0", noToken, "required"},
		{"expired", "Bearer " + signedToken(t, jwt.MapClaims{"sub": "alice", "exp": past}), expired, "expired"},
		{"wrong key", "Bearer " + wrongKey, invalid, "invalid"},
		{"expired and wrong key", "Bearer " + expiredWrongKey, invalid, "invalid"},
		{"expired without sub", "Bearer " + signedToken(t, jwt.MapClaims{"exp": past}), invalid, "invalid"},
		{"garbage", "Bearer not.a.jwt", invalid, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodGet, path: "/reservations/00000000-0000-0000-0000-000000000000",
				header: map[string]string{"Authorization": tt.authorization}})
			expectProblem(t, resp, http.StatusUnauthorized, "unauthorized")
			if got := resp.header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
			detail, _ := resp.body["detail"].(string)
			if !strings.Contains(detail, tt.detail) || strings.Contains(strings.ToLower(detail), "signature") {
				t.Errorf("detail %q, want it to say %q and nothing about signatures", detail, tt.detail)
			}
		})
	}
}

// A 405 names the methods the resource has (HEAD wherever GET is); an
// unknown method on a path no route has is still not found.
func TestMethodNotAllowedNamesTheAllowedMethods(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	tests := []struct{ method, path, allow string }{
		{http.MethodDelete, "/healthz", "GET, HEAD"},
		{http.MethodPost, "/schedules/7", "GET, HEAD"},
		{http.MethodPut, "/schedules", "GET, HEAD, POST"},
		{http.MethodPut, "/reservations/00000000-0000-0000-0000-000000000000", "GET, HEAD, DELETE"},
		{http.MethodGet, "/reservations", "POST"},
		{http.MethodPatch, "/holds/00000000-0000-0000-0000-000000000000", "GET, HEAD, DELETE"},
		{http.MethodGet, "/holds/00000000-0000-0000-0000-000000000000/confirm", "POST"},
		{"BREW", "/healthz", "GET, HEAD"},
	}
	for _, tt := range tests {
		resp := h.do(request{method: tt.method, path: tt.path})
		expectProblem(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
		if got := resp.header.Values("Allow"); len(got) != 1 || got[0] != tt.allow {
			t.Errorf("%s %s: Allow = %q, want %q", tt.method, tt.path, got, tt.allow)
		}
	}
	resp := h.do(request{method: "BREW", path: "/coffee"})
	expectProblem(t, resp, http.StatusNotFound, "not_found")
	if got := resp.header.Get("Allow"); got != "" {
		t.Errorf("404 with Allow %q", got)
	}
}
