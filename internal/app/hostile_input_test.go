package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// problemFields lists the fields a 422's errors name.
func problemFields(resp response) map[string]string {
	fields := map[string]string{}
	errs, _ := resp.body["errors"].([]any)
	for _, e := range errs {
		e := e.(map[string]any)
		fields[e["field"].(string)], _ = e["detail"].(string)
	}
	return fields
}

// scheduleBody is a POST /schedules body with startsAt, the title and the
// layout's rows as JSON text, sent as it is written.
func scheduleBody(title, startsAt, rows string) string {
	return `{"title":` + title + `,"startsAt":` + startsAt + `,"layout":{"rows":` + rows + `}}`
}

// Values a schedule must not be stored with are refused 422 naming the
// field, and nothing is stored: a start time a client could not read back
// (UTC year outside 1..9999), an offset RFC 3339 has not, a label with
// white space or a control character (labels are not trimmed), two labels
// equal under Unicode case folding, an empty category, a title that is not
// valid UTF-8 or holds a control character once trimmed. The
// schedule list answers 200 afterwards.
func TestScheduleValuesOutOfRangeAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("admin", auth.RoleAdmin)
	const (
		title    = `"Hamlet"`
		startsAt = `"2026-12-24T19:30:00+09:00"`
		rows     = `[{"label":"A","seats":5}]`
	)
	for _, tt := range []struct {
		name, body, field string
	}{
		{"start in year 10000 in UTC", scheduleBody(title, `"9999-12-31T23:59:59-23:59"`, rows), "startsAt"},
		{"start in year -1 in UTC", scheduleBody(title, `"0000-01-01T00:00:00+00:01"`, rows), "startsAt"},
		{"start in year 0", scheduleBody(title, `"0000-06-01T00:00:00Z"`, rows), "startsAt"},
		{"offset +24:00", scheduleBody(title, `"2026-12-24T19:30:00+24:00"`, rows), "startsAt"},
		{"offset minutes 60", scheduleBody(title, `"2026-12-24T19:30:00+01:60"`, rows), "startsAt"},
		{"Kelvin sign and k", scheduleBody(title, startsAt, `[{"label":"k","seats":2},{"label":"\u212a","seats":2}]`), "layout.rows[1].label"},
		{"long s and S", scheduleBody(title, startsAt, `[{"label":"S","seats":2},{"label":"\u017f","seats":2}]`), "layout.rows[1].label"},
		{"empty row category", scheduleBody(title, startsAt, `[{"label":"A","seats":2,"category":""}]`), "layout.rows[0].category"},
		{"label ending in a newline", scheduleBody(title, startsAt, `[{"label":"A\n","seats":2}]`), "layout.rows[0].label"},
		{"label ending in a tab", scheduleBody(title, startsAt, `[{"label":"A\t","seats":2}]`), "layout.rows[0].label"},
		{"label after a space", scheduleBody(title, startsAt, `[{"label":" A","seats":2}]`), "layout.rows[0].label"},
		{"label after an ideographic space", scheduleBody(title, startsAt, `[{"label":"\u3000B","seats":2}]`), "layout.rows[0].label"},
		{"title with a newline inside", scheduleBody(`"Ham\nlet"`, startsAt, rows), "title"},
		{"title with invalid UTF-8", scheduleBody("\"Ham\xfflet\"", startsAt, rows), "title"},
		{"title with a lone surrogate", scheduleBody(`"Ham\ud800let"`, startsAt, rows), "title"},
		{"seat count and an out-of-range start", `{"title":"Hamlet","startsAt":"9999-12-31T23:59:59-01:00","seatCount":5}`, "startsAt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := h.countRows("schedules")
			resp := h.do(request{method: http.MethodPost, path: "/schedules", token: admin, contentType: "application/json", body: tt.body})
			expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
			if _, ok := problemFields(resp)[tt.field]; !ok {
				t.Errorf("errors = %s, want one for %s", resp.raw, tt.field)
			}
			if n := h.countRows("schedules"); n != before {
				t.Errorf("schedules = %d after a refused body, want %d", n, before)
			}
		})
	}
	if resp := h.do(request{method: http.MethodGet, path: "/schedules?limit=100"}); resp.status != http.StatusOK {
		t.Fatalf("GET /schedules after the refusals: %d %s", resp.status, resp.raw)
	}
}

// The edges of what is accepted: the first and last instants of years
// 1..9999 (the last truncated to the microsecond stored), lower-case T
// and Z, and a title whose surrounding spaces are trimmed. Each reads
// back, alone and in the list.
func TestScheduleValuesAtTheEdgesAreKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin := h.token("admin", auth.RoleAdmin)
	for _, tt := range []struct {
		name, title, startsAt, wantTitle, wantStart string
	}{
		{"year 1", `"Hamlet"`, `"0001-01-01T00:00:00Z"`, "Hamlet", "0001-01-01T00:00:00Z"},
		{"year 1 by an offset", `"Hamlet"`, `"0001-01-01T01:00:00+01:00"`, "Hamlet", "0001-01-01T00:00:00Z"},
		{"last instant of 9999", `"Hamlet"`, `"9999-12-31T23:59:59.9999999Z"`, "Hamlet", "9999-12-31T23:59:59.999999Z"},
		{"lower-case t and z", `"Hamlet"`, `"2026-12-24t19:30:00z"`, "Hamlet", "2026-12-24T19:30:00Z"},
		{"trimmed title", `"  Hamlet \u3000"`, `"2026-12-24T19:30:00+09:00"`, "Hamlet", "2026-12-24T10:30:00Z"},
		{"title trimmed of a newline", `"\tHamlet\n"`, `"2026-12-24T19:30:00+09:00"`, "Hamlet", "2026-12-24T10:30:00Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: "/schedules", token: admin, contentType: "application/json",
				body: scheduleBody(tt.title, tt.startsAt, `[{"label":"A","seats":2}]`)})
			if resp.status != http.StatusCreated {
				t.Fatalf("create: %d %s", resp.status, resp.raw)
			}
			got := h.do(request{method: http.MethodGet, path: fmt.Sprintf("/schedules/%d", int64(resp.body["id"].(float64)))})
			if got.status != http.StatusOK || got.body["startsAt"] != tt.wantStart || got.body["title"] != tt.wantTitle {
				t.Errorf("read back: %d %s, want title %q starting %s", got.status, got.raw, tt.wantTitle, tt.wantStart)
			}
		})
	}
	if resp := h.do(request{method: http.MethodGet, path: "/schedules?limit=100"}); resp.status != http.StatusOK {
		t.Fatalf("GET /schedules: %d %s", resp.status, resp.raw)
	}
}

// null is not a value of any request member: it is refused as a wrong
// type (400 malformed_json naming the member), never taken for a member
// left out.
func TestNullMembersAreMalformed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin, alice := h.token("admin", auth.RoleAdmin), h.token("alice", "")
	schedule := h.createSchedule(10)
	for _, tt := range []struct {
		name, path, token, body, member string
	}{
		{"title", "/schedules", admin, `{"title":null,"startsAt":"2026-12-24T19:30:00Z","seatCount":5}`, `"title"`},
		{"seat count", "/schedules", admin, `{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","seatCount":null}`, `"seatCount"`},
		{"layout", "/schedules", admin, `{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","layout":null,"seatCount":5}`, `"layout"`},
		{"rows", "/schedules", admin, `{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","layout":{"rows":null}}`, `"layout.rows"`},
		{"a row", "/schedules", admin, `{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","layout":{"rows":[null]}}`, `"layout.rows[0]"`},
		{"a label", "/schedules", admin, scheduleBody(`"Hamlet"`, `"2026-12-24T19:30:00Z"`, `[{"label":null,"seats":2}]`), `"layout.rows[0].label"`},
		{"seats", "/schedules", admin, scheduleBody(`"Hamlet"`, `"2026-12-24T19:30:00Z"`, `[{"label":"A","seats":null}]`), `"layout.rows[0].seats"`},
		{"a category", "/schedules", admin, scheduleBody(`"Hamlet"`, `"2026-12-24T19:30:00Z"`, `[{"label":"A","seats":2,"category":null}]`), `"layout.rows[0].category"`},
		{"hold seat ids", "/holds", alice, fmt.Sprintf(`{"scheduleId":%d,"seatIds":null}`, schedule), `"seatIds"`},
		{"a hold's seat", "/holds", alice, fmt.Sprintf(`{"scheduleId":%d,"seatIds":[1,null]}`, schedule), `"seatIds[1]"`},
		{"hold schedule", "/holds", alice, `{"scheduleId":null,"seatIds":[1]}`, `"scheduleId"`},
		{"best-available category", "/holds", alice, fmt.Sprintf(`{"scheduleId":%d,"quantity":2,"category":null}`, schedule), `"category"`},
		{"booking seat", "/reservations", alice, fmt.Sprintf(`{"scheduleId":%d,"seatId":null}`, schedule), `"seatId"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(request{method: http.MethodPost, path: tt.path, token: tt.token, contentType: "application/json", body: tt.body})
			expectProblem(t, resp, http.StatusBadRequest, "malformed_json")
			if detail, _ := resp.body["detail"].(string); !strings.Contains(detail, tt.member) || !strings.Contains(detail, "null") {
				t.Errorf("detail %q does not name %s as null", detail, tt.member)
			}
		})
	}
	if n := h.countRows("holds") + h.countRows("reservations"); n != 0 {
		t.Errorf("%d holds and reservations stored after refused bodies, want 0", n)
	}
}

// A best-available hold's category, when sent, names one: "" is refused
// (422), not read as any category.
func TestEmptyHoldCategoryIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	resp := h.do(request{method: http.MethodPost, path: "/holds", token: h.token("alice", ""), contentType: "application/json",
		body: fmt.Sprintf(`{"scheduleId":%d,"quantity":2,"category":""}`, schedule)})
	expectProblem(t, resp, http.StatusUnprocessableEntity, "validation_failed")
	if _, ok := problemFields(resp)["category"]; !ok {
		t.Errorf("errors = %s, want one for category", resp.raw)
	}
	if n := h.countRows("holds"); n != 0 {
		t.Errorf("%d holds stored, want 0", n)
	}
}

// A single-valued header sent twice is refused (400 invalid_header), not
// read as its first value; nothing is stored.
func TestRepeatedSingleHeadersAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin, alice := h.token("admin", auth.RoleAdmin), h.token("alice", "")
	schedule := h.createSchedule(10)
	booking := fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule)
	for _, tt := range []struct {
		name, path, token, header, body string
		added                           http.Header
	}{
		{"Content-Type twice", "/schedules", admin, "Content-Type",
			`{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","seatCount":5}`,
			http.Header{"Content-Type": {"application/json", "text/plain"}}},
		{"Authorization twice", "/reservations", "", "Authorization", booking,
			http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + alice, "Bearer garbage"}}},
		{"Authorization twice, the same", "/reservations", "", "Authorization", booking,
			http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + alice, "Bearer " + alice}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := h.countRows("schedules")
			resp := h.do(request{method: http.MethodPost, path: tt.path, token: tt.token, body: tt.body, added: tt.added})
			expectProblem(t, resp, http.StatusBadRequest, "invalid_header")
			if detail, _ := resp.body["detail"].(string); !strings.Contains(detail, tt.header) {
				t.Errorf("detail %q does not name %s", detail, tt.header)
			}
			if n := h.countRows("schedules"); n != before {
				t.Errorf("schedules = %d, want %d", n, before)
			}
		})
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("%d reservations of seat 1 after refused requests, want 0", n)
	}
}

// A request body with a content coding the service does not apply is
// refused 415, with Accept-Encoding saying what is (RFC 9110 8.4.1, RFC
// 7694), and nothing is stored.
func TestContentEncodedBodiesAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	admin, alice := h.token("admin", auth.RoleAdmin), h.token("alice", "")
	schedule := h.createSchedule(10)
	for _, tt := range []struct{ name, path, token, body, coding string }{
		{"schedule, gzip", "/schedules", admin, `{"title":"Hamlet","startsAt":"2026-12-24T19:30:00Z","seatCount":5}`, "gzip"},
		{"booking, gzip", "/reservations", alice, fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule), "gzip"},
		{"hold, br", "/holds", alice, fmt.Sprintf(`{"scheduleId":%d,"seatIds":[2]}`, schedule), "br"},
		{"booking, identity then gzip", "/reservations", alice, fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, schedule), "identity, gzip"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := h.countRows("schedules")
			resp := h.do(request{method: http.MethodPost, path: tt.path, token: tt.token, contentType: "application/json", body: tt.body,
				header: map[string]string{"Content-Encoding": tt.coding}})
			expectProblem(t, resp, http.StatusUnsupportedMediaType, "unsupported_media_type")
			if got := resp.header.Get("Accept-Encoding"); got != "identity" {
				t.Errorf("Accept-Encoding = %q, want identity", got)
			}
			if n := h.countRows("schedules"); n != before {
				t.Errorf("schedules = %d, want %d", n, before)
			}
		})
	}
	if n := h.countRows("holds") + h.countRows("reservations"); n != 0 {
		t.Errorf("%d holds and reservations stored after refused bodies, want 0", n)
	}
	// identity is no coding at all.
	resp := h.do(request{method: http.MethodPost, path: "/reservations", token: alice, contentType: "application/json",
		body: fmt.Sprintf(`{"scheduleId":%d,"seatId":3}`, schedule), header: map[string]string{"Content-Encoding": "identity"}})
	if resp.status != http.StatusOK {
		t.Errorf("booking with Content-Encoding: identity: %d %s, want 200", resp.status, resp.raw)
	}
}

// Acting on a hold takes no input: confirm and release refuse a body with
// members (400) and leave the hold as it was, as extend does.
func TestHoldActionsRefuseABody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	id := h.mustHold(0, "alice", schedule, 1, 2)
	alice := h.token("alice", "")
	for _, tt := range []struct{ method, path string }{
		{http.MethodPost, "/holds/" + id + "/confirm"},
		{http.MethodDelete, "/holds/" + id},
		{http.MethodPost, "/holds/" + id + "/extend"},
	} {
		resp := h.do(request{method: tt.method, path: tt.path, token: alice, contentType: "application/json", body: `{"x":1}`})
		expectProblem(t, resp, http.StatusBadRequest, "malformed_json")
		if detail, _ := resp.body["detail"].(string); !strings.Contains(detail, `"x"`) {
			t.Errorf("%s %s: detail %q does not name \"x\"", tt.method, tt.path, detail)
		}
	}
	got := h.do(request{method: http.MethodGet, path: "/holds/" + id, token: alice})
	if got.status != http.StatusOK || got.body["status"] != "active" {
		t.Fatalf("hold after refused actions: %d %s, want it active", got.status, got.raw)
	}
	if n := h.reservationRows(schedule, 1); n != 0 {
		t.Errorf("%d reservations of seat 1, want 0", n)
	}
	// An empty body, or {}, still confirms.
	if resp := h.do(request{method: http.MethodPost, path: "/holds/" + id + "/confirm", token: alice, contentType: "application/json", body: `{}`}); resp.status != http.StatusOK {
		t.Fatalf("confirm with {}: %d %s", resp.status, resp.raw)
	}
}

// Every GET route answers HEAD with the GET's status and headers and no
// body (RFC 9110 9.3.2); the live stream's too, without opening a stream.
func TestHeadAnswersEveryGetRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(10)
	alice := h.token("alice", "")
	booked := h.reserve(0, "alice", schedule, 1)
	if booked.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", booked.status, booked.raw)
	}
	for _, tt := range []struct {
		path, token string
		status      int
		same        []string // headers HEAD must answer as GET does
	}{
		{"/healthz", "", http.StatusOK, []string{"Content-Type"}},
		{"/readyz", "", http.StatusOK, []string{"Content-Type"}},
		{"/openapi.json", "", http.StatusOK, []string{"Content-Type"}},
		{"/schedules", "", http.StatusOK, []string{"Content-Type"}},
		{fmt.Sprintf("/schedules/%d", schedule), "", http.StatusOK, []string{"Content-Type"}},
		{fmt.Sprintf("/schedules/%d/seats", schedule), "", http.StatusOK, []string{"Content-Type", "Etag", "Cache-Control"}},
		{"/schedules/999999999", "", http.StatusNotFound, []string{"Content-Type"}},
		{"/reservations/" + str(booked.body, "id"), alice, http.StatusOK, []string{"Content-Type"}},
		{"/reservations/" + str(booked.body, "id"), "", http.StatusUnauthorized, []string{"Content-Type", "Www-Authenticate"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			// One encoding for both: the seat map's ETag differs by it.
			identity := map[string]string{"Accept-Encoding": "identity"}
			get := h.do(request{method: http.MethodGet, path: tt.path, token: tt.token, header: identity})
			head := h.do(request{method: http.MethodHead, path: tt.path, token: tt.token, header: identity})
			if head.status != tt.status || get.status != tt.status {
				t.Fatalf("HEAD %d, GET %d, want %d", head.status, get.status, tt.status)
			}
			if head.raw != "" {
				t.Errorf("HEAD answered a body: %q", head.raw)
			}
			for _, name := range tt.same {
				if g, hd := get.header.Get(name), head.header.Get(name); g != hd || g == "" {
					t.Errorf("%s: GET %q, HEAD %q", name, g, hd)
				}
			}
		})
	}

	// The page, which is not JSON.
	page, err := h.client.Head(h.bases[0] + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Errorf("HEAD /: %d %q, want 200 text/html", page.StatusCode, page.Header.Get("Content-Type"))
	}

	// The stream's headers, at once, and no stream left open.
	start := time.Now()
	head := h.do(request{method: http.MethodHead, path: fmt.Sprintf("/schedules/%d/seats/events", schedule)})
	if head.status != http.StatusOK || head.header.Get("Content-Type") != "text/event-stream" || head.raw != "" {
		t.Errorf("HEAD of the stream: %d %q %q, want 200 text/event-stream and no body", head.status, head.header.Get("Content-Type"), head.raw)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("HEAD of the stream took %v: it must not wait for events", elapsed)
	}
	if head := h.do(request{method: http.MethodHead, path: "/schedules/999999999/seats/events"}); head.status != http.StatusNotFound {
		t.Errorf("HEAD of an unknown schedule's stream: %d, want 404", head.status)
	}

	// Allow names HEAD wherever GET is allowed.
	resp := h.do(request{method: http.MethodPut, path: "/schedules"})
	if resp.status != http.StatusMethodNotAllowed || resp.header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT /schedules: %d, Allow %q, want 405 with GET, HEAD, POST", resp.status, resp.header.Get("Allow"))
	}
	resp = h.do(request{method: http.MethodPut, path: "/reservations"})
	if resp.status != http.StatusMethodNotAllowed || resp.header.Get("Allow") != "POST" {
		t.Errorf("PUT /reservations: %d, Allow %q, want 405 with POST", resp.status, resp.header.Get("Allow"))
	}
}
