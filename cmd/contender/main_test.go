package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

const secret = "contender-test-secret-contender-test!!"

type answer struct {
	status int
	code   string
	body   string
}

func post(t *testing.T, base, path, token, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Code string }
	_ = json.Unmarshal(raw, &p)
	return answer{resp.StatusCode, p.Code, string(raw)}
}

func serve(t *testing.T, name string) string {
	t.Helper()
	h, closeAll, err := newContender(context.Background(), name, lockenv.DatabaseURL(t), lockenv.RedisURL(t), secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeAll() })
	return srv.URL
}

func token(t *testing.T, user string) string {
	t.Helper()
	tok, err := auth.Mint([]byte(secret), user, "", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// scheduleOf creates a schedule of seats seats and returns its id.
func scheduleOf(t *testing.T, base string, seats int) int64 {
	t.Helper()
	a := post(t, base, "/schedules", "", fmt.Sprintf(`{"seatCount":%d}`, seats))
	var out struct{ ID int64 }
	if a.status != http.StatusCreated || json.Unmarshal([]byte(a.body), &out) != nil || out.ID <= 0 {
		t.Fatalf("create schedule: %d %s", a.status, a.body)
	}
	return out.ID
}

func expect(t *testing.T, what string, got answer, status int, code string) {
	t.Helper()
	if got.status != status || got.code != code {
		t.Errorf("%s: %d %q (%s), want %d %q", what, got.status, got.code, got.body, status, code)
	}
}

// The naive flow answers the contract's statuses: a booking, the seat
// taken, the seat locked by another request, unknown schedule and seat,
// a missing token.
func TestNaiveContenderAnswersTheContract(t *testing.T) {
	t.Parallel()
	base := serve(t, "naive")
	id := scheduleOf(t, base, 10)
	alice, bob := token(t, "alice"), token(t, "bob")
	book := func(tok string, seat int) answer {
		return post(t, base, "/reservations", tok, fmt.Sprintf(`{"scheduleId":%d,"seatId":%d}`, id, seat))
	}
	expect(t, "a free seat", book(alice, 1), http.StatusOK, "")
	expect(t, "the same seat again", book(bob, 1), http.StatusConflict, "seat_taken")
	// Another request holds seat 2's lock.
	rdb := lockenv.Redis(t)
	if err := rdb.Set(context.Background(), fmt.Sprintf("contender:lock:%d:2", id), "other", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	expect(t, "a locked seat", book(bob, 2), http.StatusConflict, "seat_locked")
	expect(t, "a seat outside the schedule", book(bob, 11), http.StatusNotFound, "seat_not_found")
	expect(t, "an unknown schedule", post(t, base, "/reservations", bob, `{"scheduleId":999999,"seatId":1}`), http.StatusNotFound, "schedule_not_found")
	expect(t, "no token", book("", 3), http.StatusUnauthorized, "unauthorized")
	expect(t, "a bad token", book(alice+"x", 3), http.StatusUnauthorized, "unauthorized")
	expect(t, "a malformed body", post(t, base, "/reservations", bob, `{`), http.StatusBadRequest, "malformed_json")
}

// The static limit refuses every booking with seat_taken; the insert-only
// limit books a seat once.
func TestLimitContendersAnswerTheContract(t *testing.T) {
	t.Parallel()
	static := serve(t, "static")
	expect(t, "static", post(t, static, "/reservations", "", `{"scheduleId":1,"seatId":1}`), http.StatusConflict, "seat_taken")

	insert := serve(t, "insertonly")
	id := scheduleOf(t, insert, 10)
	body := fmt.Sprintf(`{"scheduleId":%d,"seatId":1}`, id)
	expect(t, "insert-only, a free seat", post(t, insert, "/reservations", token(t, "alice"), body), http.StatusOK, "")
	expect(t, "insert-only, the same seat", post(t, insert, "/reservations", token(t, "bob"), body), http.StatusConflict, "seat_taken")
	expect(t, "insert-only, no token", post(t, insert, "/reservations", "", body), http.StatusUnauthorized, "unauthorized")
}

func TestUnknownContender(t *testing.T) {
	if _, _, err := newContender(context.Background(), "fast", "", "", secret); err == nil {
		t.Fatal("an unknown contender: want an error")
	}
}
