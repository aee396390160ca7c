package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

type otherKey struct{}

func timedContext(parent context.Context, timeout time.Duration) *requestContext {
	c := newRequestContext(parent, "req-1", problem.Scope{})
	c.setDeadline(timeout)
	return c
}

// A request context answers as context.WithTimeout's would, armed or not.
func TestRequestContextDeadline(t *testing.T) {
	t.Parallel()
	parent := context.WithValue(context.Background(), otherKey{}, "parent's")

	c := timedContext(parent, time.Hour)
	if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("Deadline() = %v, %v; want an hour from now", d, ok)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err() = %v before the deadline", err)
	}
	if got := c.Value(otherKey{}); got != "parent's" {
		t.Fatalf("Value(other) = %v, want the parent's", got)
	}
	if got := problem.ScopeFrom(c); got != &c.scope || got.ID != "req-1" {
		t.Fatalf("ScopeFrom = %+v, want the request's own scope", got)
	}
	if c.armed.Load() != nil {
		t.Fatal("asking Deadline, Err and Value armed a timer")
	}

	// Past its deadline, unarmed: Err says so; Done is closed, and then
	// context.Cause agrees.
	past := timedContext(parent, -time.Second)
	if err := past.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() = %v past the deadline, want DeadlineExceeded", err)
	}
	if past.Value(otherKey{}) != "parent's" || past.armed.Load() != nil {
		t.Fatal("Value past the deadline armed a timer or lost the parent's values")
	}
	select {
	case <-past.Done():
	default:
		t.Fatal("Done() is open past the deadline")
	}
	if cause := context.Cause(past); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("Cause = %v past the deadline, want DeadlineExceeded", cause)
	}

	// Armed: Done closes at the deadline, and a child ends with it.
	soon := timedContext(parent, 50*time.Millisecond)
	child, cancel := context.WithCancel(soon)
	defer cancel()
	ran := make(chan struct{})
	stop := context.AfterFunc(soon, func() { close(ran) })
	defer stop()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the child of an armed request context did not end at its deadline")
	}
	<-ran
	if !errors.Is(soon.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) ||
		!errors.Is(context.Cause(soon), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v, child's %v, Cause %v; want DeadlineExceeded", soon.Err(), child.Err(), context.Cause(soon))
	}
	soon.release()
}

// The parent's end and an earlier parent deadline go through, armed or not.
func TestRequestContextFollowsItsParent(t *testing.T) {
	t.Parallel()
	for _, armFirst := range []bool{false, true} {
		parent, cancel := context.WithCancel(context.Background())
		c := timedContext(parent, time.Hour)
		if armFirst {
			c.Done()
		}
		cancel()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("armed %v: Err() = %v after the parent's end, want Canceled", armFirst, c.Err())
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("armed %v: Done() open after the parent's end", armFirst)
		}
		c.release()
	}

	early, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := timedContext(early, time.Hour)
	want, _ := early.Deadline()
	if got, ok := c.Deadline(); !ok || !got.Equal(want) {
		t.Fatalf("Deadline() = %v, want the parent's earlier %v", got, want)
	}

	// Without a deadline (a stream), everything is the parent's.
	ended, end := context.WithCancel(context.Background())
	end()
	open := newRequestContext(ended, "req-2", problem.Scope{})
	if open.Done() != ended.Done() || !errors.Is(open.Err(), context.Canceled) {
		t.Fatal("a request context without a deadline is not its parent's")
	}
	if _, ok := open.Deadline(); ok {
		t.Fatal("a request context without a deadline has one")
	}
}

// Once released (the handler returned), the context is canceled, whether it
// was armed before, after or never.
func TestRequestContextRelease(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"before", "after", "never"} {
		c := timedContext(context.Background(), time.Hour)
		if when == "before" {
			c.Done()
		}
		c.release()
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("armed %s release: Err() = %v, want Canceled", when, c.Err())
		}
		if when == "never" {
			continue
		}
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("armed %s release: Done() still open", when)
		}
		if cause := context.Cause(c); !errors.Is(cause, context.Canceled) {
			t.Fatalf("armed %s release: Cause = %v", when, cause)
		}
	}
}

// Many goroutines arming, asking and releasing at once (run with -race):
// one timer, every answer consistent.
func TestRequestContextConcurrentUse(t *testing.T) {
	t.Parallel()
	for range 50 {
		c := timedContext(context.Background(), time.Hour)
		var wg sync.WaitGroup
		dones := make([]<-chan struct{}, 16)
		for i := range dones {
			wg.Go(func() {
				_ = c.Err()
				_ = c.Value(otherKey{})
				dones[i] = c.Done()
			})
		}
		wg.Wait()
		for _, d := range dones {
			if d != dones[0] {
				t.Fatal("Done() gave different channels: more than one timer armed")
			}
		}
		var released sync.WaitGroup
		released.Go(c.release)
		for range 8 {
			wg.Go(func() { <-c.Done() })
		}
		released.Wait()
		wg.Wait()
	}
}

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
