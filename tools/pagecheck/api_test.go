package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A booking whose first attempts meet a 503 and a key still in use is
// sent again with the same Idempotency-Key and counted as two retries; a
// refusal such as seat_taken is not retried.
func TestReserveRetriesWithTheSameKey(t *testing.T) {
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		switch len(keys) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"code":"idempotency_key_in_use"}`))
		case 3:
			w.Header().Set("Idempotent-Replayed", "true")
			_, _ = w.Write([]byte(`{"seatId":7}`))
		default:
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"code":"seat_taken"}`))
		}
	}))
	defer srv.Close()
	svc := newAPI(srv.URL)

	if err := svc.reserve(context.Background(), "token", 1, 7); err != nil {
		t.Fatalf("reserve: %v", err)
	}
	if len(keys) != 3 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("keys sent %q, want one key three times", keys)
	}
	if svc.retries != 2 || svc.retryCauses["503"] != 1 || svc.retryCauses["409 idempotency_key_in_use"] != 1 || svc.replayed != 1 {
		t.Fatalf("retries %d %v, replayed %d; want 2 (a 503, a key in use), 1 replayed", svc.retries, svc.retryCauses, svc.replayed)
	}
	if err := svc.reserve(context.Background(), "token", 1, 8); err == nil || len(keys) != 4 {
		t.Fatalf("seat_taken: error %v after %d requests, want an error after one more", err, len(keys))
	}
}

// lagging serves a seat map of seats 1–3 in which seat 2 (booked) shows
// held for the first lag reads: an instance the booking's event has not
// reached yet.
func lagging(t *testing.T, lag int) (*api, *int) {
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads++
		second := "reserved"
		if reads <= lag {
			second = "held"
		}
		_, _ = fmt.Fprintf(w, `{"seats":[{"seatId":1,"status":"available","label":"A1","row":"A"},`+
			`{"seatId":2,"status":%q,"label":"A2","row":"A"},{"seatId":3,"status":"available","label":"A3","row":"A"}]}`, second)
	}))
	t.Cleanup(srv.Close)
	return newAPI(srv.URL), &reads
}

// The seat map is read again until it shows every booking.
func TestSeatMapReadUntilItShowsTheBookings(t *testing.T) {
	svc, reads := lagging(t, 3)
	got, err := settledSeatMap(context.Background(), svc, 1, []int{2}, nil, 10*time.Second)
	if err != nil || got[2].Status != "reserved" || *reads != 4 {
		t.Fatalf("seat 2 %q after %d reads, %v; want reserved after 4", got[2].Status, *reads, err)
	}
}

// A map that never shows a booking fails, saying which seat, once settle
// is up.
func TestSeatMapThatNeverShowsABookingFails(t *testing.T) {
	svc, reads := lagging(t, 1<<30)
	_, err := settledSeatMap(context.Background(), svc, 1, []int{2}, nil, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "seat 2 (A2) is held, want reserved (still, 200ms after") {
		t.Fatalf("after %d reads: %v; want seat 2 held, want reserved, still after 200ms", *reads, err)
	}
}
