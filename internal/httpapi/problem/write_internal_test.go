package problem

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// Write answers a problem with its body, its length and the request's id,
// twice in a row from the pooled buffer.
func TestWriteProblem(t *testing.T) {
	for range 2 {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/reservations", nil)
		req = req.WithContext(WithScope(req.Context(), &Scope{ID: "req-1"}))
		Write(rec, req, NotFound)
		want := `{"type":"urn:seatlock:problem:not_found","title":"Not found","status":404,"detail":"No such resource.","code":"not_found","requestId":"req-1"}` + "\n"
		if rec.Code != http.StatusNotFound || rec.Body.String() != want {
			t.Fatalf("got %d %s, want 404 %s", rec.Code, rec.Body.String(), want)
		}
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(len(want)) {
			t.Fatalf("Content-Length %s for %d bytes", got, len(want))
		}
	}
}

func TestContentLength(t *testing.T) {
	for _, n := range []int{0, 1, 143, len(contentLengths) - 1, len(contentLengths), 1 << 20} {
		if got := contentLength(n); len(got) != 1 || got[0] != strconv.Itoa(n) {
			t.Errorf("contentLength(%d) = %v", n, got)
		}
	}
}
