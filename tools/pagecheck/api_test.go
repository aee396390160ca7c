package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
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
