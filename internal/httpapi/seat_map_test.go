package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// The seat map is rendered once per state of its image, form and
// encoding: a revalidation answers 304 without rendering, a change makes
// a new tag; gzip is the identity body compressed.
func TestSeatMapRendersOncePerState(t *testing.T) {
	t.Parallel()
	verifier, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	const schedule = 7
	polled := seatmap.NewImages(nil, countedSeats{&atomic.Int64{}}, seatmap.Config{})
	maps := &seatmap.Maps{}
	srv := httptest.NewServer(httpapi.NewHandler(httpapi.Options{
		Bookings: mapBookings{id: schedule}, SeatImages: polled, Verifier: verifier, SeatMaps: maps,
	}))
	defer srv.Close()
	// answer is what the test reads of a response, its body closed.
	type answer struct {
		StatusCode int
		Header     http.Header
	}
	get := func(query string, header map[string]string) (answer, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/schedules/%d/seats%s", srv.URL, schedule, query), nil)
		req.Header.Set("Accept-Encoding", "identity")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gzip
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header}, body
	}
	plain, plainBody := get("?form=compact", nil)
	if plain.StatusCode != http.StatusOK || plain.Header.Get("Content-Encoding") != "" || !strings.Contains(string(plainBody), `"version":0`) {
		t.Fatalf("compact map: %d %q %s", plain.StatusCode, plain.Header.Get("Content-Encoding"), plainBody)
	}
	zipped, zippedBody := get("?form=compact", map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.5"})
	if zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" || zipped.Header.Get("Etag") == plain.Header.Get("Etag") {
		t.Fatalf("gzip: Content-Encoding %q, Vary %q, ETag %s (identity %s)", zipped.Header.Get("Content-Encoding"), zipped.Header.Get("Vary"), zipped.Header.Get("Etag"), plain.Header.Get("Etag"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zippedBody))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, plainBody) {
		t.Errorf("gunzipped %s, want %s", unzipped, plainBody)
	}
	// The full form is compressed as it is rendered, not from a whole body.
	_, fullBody := get("", nil)
	fullZipped, fullZippedBody := get("", map[string]string{"Accept-Encoding": "gzip"})
	if fullZipped.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("full form, gzip: Content-Encoding %q", fullZipped.Header.Get("Content-Encoding"))
	}
	if zr, err = gzip.NewReader(bytes.NewReader(fullZippedBody)); err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); !bytes.Equal(unzipped, fullBody) || !strings.Contains(string(fullBody), `"seatId":1,`) {
		t.Errorf("full form: gunzipped %s, want %s", unzipped, fullBody)
	}
	if refused, _ := get("?form=compact", map[string]string{"Accept-Encoding": "gzip;q=0"}); refused.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got gzip")
	}
	renders := maps.Renders()
	for range 3 {
		again, body := get("?form=compact", map[string]string{"If-None-Match": plain.Header.Get("Etag")})
		if again.StatusCode != http.StatusNotModified || len(body) != 0 || again.Header.Get("Etag") != plain.Header.Get("Etag") {
			t.Fatalf("revalidation: %d %q ETag %s", again.StatusCode, body, again.Header.Get("Etag"))
		}
	}
	if n := maps.Renders(); n != renders {
		t.Errorf("revalidations rendered %d maps, want none", n-renders)
	}
	// The full form is another representation, with a tag of its own.
	full, fullBody := get("", map[string]string{"If-None-Match": plain.Header.Get("Etag")})
	if full.StatusCode != http.StatusOK || !strings.HasPrefix(string(fullBody), `{"scheduleId":7,"form":"full","seats":[`) {
		t.Fatalf("full map: %d %s", full.StatusCode, fullBody)
	}
	// A change: the image shows it, under a new tag and a higher version.
	polled.Expect(schedule, []int{2}, reservation.SeatReserved)
	changed, changedBody := get("?form=compact", map[string]string{"If-None-Match": plain.Header.Get("Etag")})
	if changed.StatusCode != http.StatusOK || changed.Header.Get("Etag") == plain.Header.Get("Etag") ||
		!strings.Contains(string(changedBody), `"version":1`) || !strings.Contains(string(changedBody), `"status":"ara"`) {
		t.Errorf("after a change: %d ETag %s (was %s) %s", changed.StatusCode, changed.Header.Get("Etag"), plain.Header.Get("Etag"), changedBody)
	}
	if bad, body := get("?form=tiny", nil); bad.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"field":"form"`) {
		t.Errorf("?form=tiny: %d %s, want 422 on form", bad.StatusCode, body)
	}
}
