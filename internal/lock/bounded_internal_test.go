package lock

import (
	"context"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

// A release's context keeps the caller's values, ignores its cancellation
// and ends between the timeout and an eighth more.
func TestReleaseContextBounds(t *testing.T) {
	const timeout = 400 * time.Millisecond
	r := newReleaseBounds(timeout)
	caller, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	start := time.Now()
	ctx := r.context(caller)
	cancel()
	if got := ctx.Value(ctxKey{}); got != "v" {
		t.Errorf("Value = %v, want the caller's", got)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("ended with the caller's context: %v", err)
	}
	deadline, ok := ctx.Deadline()
	if !ok || deadline.Before(start.Add(timeout)) || deadline.After(start.Add(timeout+timeout/8+10*time.Millisecond)) {
		t.Errorf("Deadline = %v (%v after start), want within [%v, %v]", deadline, deadline.Sub(start), timeout, timeout+timeout/8)
	}
	<-ctx.Done()
	if ended := time.Since(start); ended < timeout {
		t.Errorf("ended after %v, want at least %v", ended, timeout)
	}
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("Err = %v, want DeadlineExceeded", ctx.Err())
	}
}

// Releases started close together share one deadline, and contexts derived
// from a release's context follow it without a goroutine each.
func TestReleaseContextsShareADeadline(t *testing.T) {
	r := newReleaseBounds(time.Hour)
	a, b := r.context(context.Background()), r.context(context.Background())
	if a.(*boundedContext).bucket != b.(*boundedContext).bucket {
		t.Error("two releases a moment apart got different buckets")
	}
	before := runtime.NumGoroutine()
	var cancels []context.CancelFunc
	for range 100 {
		_, cancel := context.WithCancel(a)
		cancels = append(cancels, cancel)
	}
	if after := runtime.NumGoroutine(); after > before+5 {
		t.Errorf("goroutines %d -> %d after deriving 100 contexts, want no goroutine each", before, after)
	}
	for _, c := range cancels {
		c()
	}
}
