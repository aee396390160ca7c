package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/app"
)

// Profiles are served by the debug handler (DEBUG_ADDR) and never by the
// public API.
func TestProfilesOnlyOnTheDebugListener(t *testing.T) {
	t.Parallel()
	debug := httptest.NewServer(app.DebugHandler())
	t.Cleanup(debug.Close)
	resp, err := http.Get(debug.URL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("debug handler: %d, want 200", resp.StatusCode)
	}

	h := newHarness(t, 1)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/profile"} {
		got := h.do(request{method: http.MethodGet, path: path})
		if got.status != http.StatusNotFound || strings.Contains(got.raw, "goroutine") {
			t.Errorf("public GET %s: %d %.80s, want 404", path, got.status, got.raw)
		}
	}
}
