package httpapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// settingsRoom keeps the one queue the fuzz target puts, as the store
// would (the opening to the millisecond), and refuses with errBroken any
// settings out of their documented ranges: the edge must never let them
// through.
type settingsRoom struct {
	watchingRoom
	mu     sync.Mutex
	stored *waitroom.Settings
}

func (r *settingsRoom) Put(_ context.Context, _ int64, s waitroom.Settings) (waitroom.Settings, error) {
	s.OpensAt = waitroom.StoredOpening(s.OpensAt)
	if s.OpensAt.Before(reservation.EarliestStart) || s.OpensAt.After(reservation.LatestStart) ||
		s.AdmitPerSecond < 1 || s.AdmitPerSecond > waitroom.MaxAdmitPerSecond ||
		s.MaxActive < 0 || s.MaxActive > waitroom.MaxActiveLimit ||
		s.AdmissionTTL < waitroom.MinAdmissionTTL || s.AdmissionTTL > waitroom.MaxAdmissionTTL || s.AdmissionTTL%time.Second != 0 {
		return waitroom.Settings{}, errBroken
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stored = &s
	return s, nil
}

func (r *settingsRoom) Queue(context.Context, int64) (waitroom.Settings, waitroom.Counts, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stored == nil {
		return waitroom.Settings{}, waitroom.Counts{}, waitroom.ErrQueueNotFound
	}
	return *r.stored, waitroom.Counts{}, nil
}

func (r *settingsRoom) current() *waitroom.Settings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stored
}

// queueAnswer is a queue as PUT and GET answer it, without its counts,
// and its settings as they are put (no cap: maxActive left out).
type queueAnswer struct {
	OpensAt             string `json:"opensAt"`
	AdmitPerSecond      int64  `json:"admitPerSecond"`
	MaxActive           *int64 `json:"maxActive,omitempty"`
	AdmissionTTLSeconds int64  `json:"admissionTtlSeconds"`
}

func (a queueAnswer) same(b queueAnswer) bool {
	return a.OpensAt == b.OpensAt && a.AdmitPerSecond == b.AdmitPerSecond && a.AdmissionTTLSeconds == b.AdmissionTTLSeconds &&
		(a.MaxActive == nil) == (b.MaxActive == nil) && (a.MaxActive == nil || *a.MaxActive == *b.MaxActive)
}

// FuzzQueueSettings puts a queue's settings from arbitrary members, each
// put into the body as it is (the opening inside quotes, the integers
// bare; an empty one is left out): whatever is refused is a 400 or 422
// problem and changes nothing stored; whatever is accepted is within the
// documented ranges, is what was sent (the opening in UTC, to the
// millisecond), and reads back and puts again as the same queue.
func FuzzQueueSettings(f *testing.F) {
	for _, seed := range []struct{ opensAt, admitPerSecond, maxActive, ttl string }{
		{"2030-01-01T19:00:00+09:00", "50", "200", ""},
		{"9999-12-31T23:00:00-23:59", "5", "", ""},
		{"0000-01-01T00:00:00+01:00", "5", "", ""},
		{"0000-01-01T00:00:00Z", "5", "", ""},
		{"0001-01-01T00:00:00Z", "5", "", "60"},
		{"9999-12-31T23:59:59.999999999Z", "10000", "1000000", "3600"},
		{"2030-01-01t10:00:00z", "5", "", "36028797018964568"},
		{"2030-01-01T10:00:00Z", "9223372036854775807", "-1", "-9223372036854775808"},
		{"2030-01-01T10:00:00Z", "5", "0", "9223372036854775808"},
		{"2030-01-01T10:00:00Z", "5.0", "1e3", "600.5"},
		{"2030-01-01T10:00:00+24:00", "null", "\"7\"", "[]"},
	} {
		f.Add(seed.opensAt, seed.admitPerSecond, seed.maxActive, seed.ttl)
	}
	verifier, admin := testAuth(f, "root", auth.RoleAdmin)
	room := &settingsRoom{}
	h := httpapi.NewHandler(httpapi.Options{Bookings: fuzzBookings{}, Verifier: verifier, RequestTimeout: 5 * time.Second, Room: room})
	path := fmt.Sprintf("/schedules/%d/queue", fuzzSchedule)
	serve := func(method, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	f.Fuzz(func(t *testing.T, opensAt, admitPerSecond, maxActive, ttl string) {
		members := []string{fmt.Sprintf(`"opensAt":"%s"`, opensAt)}
		for _, m := range []struct{ name, value string }{
			{"admitPerSecond", admitPerSecond}, {"maxActive", maxActive}, {"admissionTtlSeconds", ttl},
		} {
			if m.value != "" {
				members = append(members, `"`+m.name+`":`+m.value)
			}
		}
		body := "{" + strings.Join(members, ",") + "}"
		before := room.current()
		rec := serve(http.MethodPut, body)
		problem := checkAnswer(t, rec)
		if rec.Code != http.StatusOK {
			code := problem["code"]
			refusedAsExpected := rec.Code == http.StatusBadRequest && code == "malformed_json" ||
				rec.Code == http.StatusUnprocessableEntity && code == "validation_failed"
			if !refusedAsExpected {
				t.Fatalf("body %s: answered %d %s", body, rec.Code, rec.Body)
			}
			if room.current() != before {
				t.Fatalf("body %s: refused %d, yet stored", body, rec.Code)
			}
			return
		}
		put := readQueueAnswer(t, body, rec)
		sentOpening, err := time.Parse(time.RFC3339Nano, strings.ToUpper(opensAt))
		opening, _ := time.Parse(time.RFC3339Nano, put.OpensAt)
		if err != nil || !opening.Equal(sentOpening.Truncate(time.Millisecond)) || !strings.HasSuffix(put.OpensAt, "Z") {
			t.Fatalf("body %s: accepted as opening %s", body, put.OpensAt)
		}
		for _, sent := range []struct {
			value, dflt string
			got         *int64
		}{
			{admitPerSecond, "", &put.AdmitPerSecond}, {maxActive, "", put.MaxActive}, {ttl, "600", &put.AdmissionTTLSeconds},
		} {
			// JSON allows whitespace around a value: "20 " is 20.
			want, err := strconv.ParseFloat(strings.Trim(cmp.Or(sent.value, sent.dflt), " \t\r\n"), 64)
			if sent.value == "" && sent.dflt == "" {
				if sent.got != nil {
					t.Fatalf("body %s: a member left out is answered %d", body, *sent.got)
				}
				continue
			}
			if err != nil || sent.got == nil || float64(*sent.got) != want {
				t.Fatalf("body %s: accepted as %s", body, rec.Body)
			}
		}
		again := serve(http.MethodGet, "")
		if again.Code != http.StatusOK || !readQueueAnswer(t, body, again).same(put) {
			t.Fatalf("body %s: put %s, read %d %s", body, rec.Body, again.Code, again.Body)
		}
		settings, _ := json.Marshal(put)
		if reput := serve(http.MethodPut, string(settings)); reput.Code != http.StatusOK || !readQueueAnswer(t, body, reput).same(put) {
			t.Fatalf("body %s: put back as %s, answered %d %s", body, settings, reput.Code, reput.Body)
		}
	})
}

// readQueueAnswer reads a queue's answer and checks it against the
// documented ranges.
func readQueueAnswer(t *testing.T, body string, rec *httptest.ResponseRecorder) queueAnswer {
	t.Helper()
	var q queueAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &q); err != nil {
		t.Fatalf("body %s: answered %s: %v", body, rec.Body, err)
	}
	opening, err := time.Parse(time.RFC3339Nano, q.OpensAt)
	if err != nil || opening.Before(reservation.EarliestStart) || opening.After(reservation.LatestStart) ||
		q.AdmitPerSecond < 1 || q.AdmitPerSecond > waitroom.MaxAdmitPerSecond ||
		q.MaxActive != nil && (*q.MaxActive < 1 || *q.MaxActive > waitroom.MaxActiveLimit) ||
		q.AdmissionTTLSeconds < int64(waitroom.MinAdmissionTTL/time.Second) || q.AdmissionTTLSeconds > int64(waitroom.MaxAdmissionTTL/time.Second) {
		t.Fatalf("body %s: answered out of range: %s", body, rec.Body)
	}
	return q
}
