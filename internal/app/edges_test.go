package app_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// The seat map is gzipped only where Accept-Encoding accepts gzip (RFC
// 9110 12.5.3): "*" does not stand for a coding listed by name, and a
// weight counts wherever it is among an entry's parameters. A client
// that refuses identity as well as gzip is answered 406.
func TestSeatMapEncodingIsNegotiated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	schedule := h.createSchedule(50)
	path := fmt.Sprintf("/schedules/%d/seats", schedule)
	for _, tt := range []struct {
		acceptEncoding string
		want           string // Content-Encoding
	}{
		{"gzip;q=0, *", ""},
		{"*, gzip;q=0", ""},
		{"gzip;foo=1;q=0", ""},
		{"GZIP;Q=0, *", ""},
		{"gzip;q=0.5, identity", ""},
		{"gzip;q=abc", ""},
		{"gzip", "gzip"},
		{"*", "gzip"},
		{"gzip, *;q=0", "gzip"},
		{"br;q=1, gzip;q=0.5", "gzip"},
	} {
		for _, form := range []string{"", "?form=compact"} {
			req, err := http.NewRequest(http.MethodGet, h.bases[0]+path+form, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Set by hand, so the client passes the body on as it came.
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got := resp.Header.Get("Content-Encoding")
			if resp.StatusCode != http.StatusOK || got != tt.want {
				t.Errorf("GET %s%s with Accept-Encoding %q: %d, Content-Encoding %q; want 200, %q", path, form, tt.acceptEncoding, resp.StatusCode, got, tt.want)
			}
			if vary := resp.Header.Get("Vary"); vary != "Accept-Encoding" {
				t.Errorf("Accept-Encoding %q: Vary %q", tt.acceptEncoding, vary)
			}
		}
	}
	for _, refused := range []string{"identity;q=0", "*;q=0", "gzip;q=0, identity;q=0"} {
		resp := h.do(request{method: http.MethodGet, path: path, header: map[string]string{"Accept-Encoding": refused}})
		expectProblem(t, resp, http.StatusNotAcceptable, "not_acceptable")
		if vary := resp.header.Get("Vary"); vary != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: Vary %q", refused, vary)
		}
	}
}
