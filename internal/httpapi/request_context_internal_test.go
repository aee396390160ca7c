package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

type otherKey struct{}

// The recording writer keeps the first final status and counts the bytes.
func TestRecordingWriter(t *testing.T) {
	t.Parallel()
	hints := &recordingWriter{ResponseWriter: discardWriter{}}
	hints.WriteHeader(http.StatusEarlyHints)
	if hints.Status() != 0 {
		t.Fatalf("a 103 was recorded as the status: %d", hints.Status())
	}
	hints.WriteHeader(http.StatusCreated)
	if hints.Status() != http.StatusCreated {
		t.Fatalf("status %d after 103 and 201, want 201", hints.Status())
	}
	rec := httptest.NewRecorder()
	w := &recordingWriter{ResponseWriter: rec}
	w.WriteHeader(http.StatusConflict)
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if w.Status() != http.StatusConflict || w.BytesWritten() != 5 || !rec.Flushed {
		t.Fatalf("status %d, bytes %d, flushed %v", w.Status(), w.BytesWritten(), rec.Flushed)
	}
	implicit := &recordingWriter{ResponseWriter: httptest.NewRecorder()}
	_, _ = implicit.Write([]byte("x"))
	if implicit.Status() != http.StatusOK {
		t.Fatalf("status %d after a Write alone, want 200", implicit.Status())
	}
	if http.NewResponseController(w).Flush() != nil {
		t.Fatal("a ResponseController cannot flush through the recording writer")
	}
}

type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

// withTimeout bounds a request whose context another middleware wrapped
// before it (so it is not the requestContext withScope made) the plain
// way, instead of failing on it.
func TestTimeoutOverAWrappedContext(t *testing.T) {
	var deadline time.Time
	var bounded bool
	h := withTimeout(time.Minute)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, bounded = r.Context().Deadline()
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req = req.WithContext(context.WithValue(newRequestContext(req.Context(), "req-1", problem.Scope{}), otherKey{}, "wrapped"))
	start := time.Now()
	h.ServeHTTP(httptest.NewRecorder(), req)
	if !bounded || deadline.Before(start.Add(time.Minute-time.Second)) || deadline.After(time.Now().Add(time.Minute)) {
		t.Fatalf("deadline %v (set %v), want a minute from %v", deadline, bounded, start)
	}
}
