package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
)

// BenchmarkHotSeatRequest is the HTTP edge's own cost of the hammered path:
// a booking refused as seat_taken by the use case, with access logging on,
// no network and no store.
func BenchmarkHotSeatRequest(b *testing.B) {
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		b.Fatal(err)
	}
	token, err := auth.Mint(secret, "alice", "", time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	taken := func(context.Context) (reservation.Reservation, error) {
		return reservation.Reservation{}, reservation.ErrSeatTaken
	}
	h := httpapi.NewHandler(httpapi.Options{
		Bookings: fakeBookings{reserve: taken}, Verifier: verifier,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/reservations", strings.NewReader(`{"scheduleId":1,"seatId":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusConflict {
			b.Fatalf("status %d, want 409", rec.Code)
		}
	}
}
