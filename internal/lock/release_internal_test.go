package lock

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

type ctxKey struct{}

// A release's context keeps the caller's values, ignores its cancellation
// (context.Cause too) and ends between the timeout and an eighth more.
func TestReleaseContextBounds(t *testing.T) {
	const timeout = 200 * time.Millisecond
	r := newReleaseBounds(timeout)
	caller, cancel := context.WithCancelCause(context.WithValue(context.Background(), ctxKey{}, "v"))
	start := time.Now()
	bounded := r.bound(caller, start)
	ctx := context.Context(&bounded)
	cancel(errors.New("caller gone"))
	if got := ctx.Value(ctxKey{}); got != "v" {
		t.Errorf("Value = %v, want the caller's", got)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("ended with the caller's context: %v", err)
	}
	if cause := context.Cause(ctx); cause != nil {
		t.Fatalf("Cause = %v while the release runs, want nil", cause)
	}
	deadline, ok := ctx.Deadline()
	if !ok || deadline.Before(start.Add(timeout)) || deadline.After(start.Add(timeout+timeout/8)) {
		t.Errorf("Deadline = %v after start, want within [%v, %v]", deadline.Sub(start), timeout, timeout+timeout/8)
	}
	<-ctx.Done()
	if time.Now().Before(deadline) {
		t.Errorf("ended %v before its deadline", time.Until(deadline))
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Errorf("Err = %v, Cause = %v, want DeadlineExceeded", ctx.Err(), context.Cause(ctx))
	}
}

// Releases started close together share one deadline, and contexts derived
// from a release's context follow it without a goroutine each.
func TestReleaseContextsShareADeadline(t *testing.T) {
	r := newReleaseBounds(time.Hour)
	now := time.Now()
	a, b := r.bound(context.Background(), now), r.bound(context.Background(), now.Add(time.Millisecond))
	if a.bucket != b.bucket {
		t.Error("two releases a moment apart got different buckets")
	}
	if later := r.bound(context.Background(), now.Add(time.Hour/8)); later.bucket == a.bucket {
		t.Error("a release an eighth of the timeout later got the same bucket")
	}
	before := runtime.NumGoroutine()
	var cancels []context.CancelFunc
	for range 100 {
		_, cancel := context.WithCancel(&a)
		cancels = append(cancels, cancel)
	}
	if after := runtime.NumGoroutine(); after > before+5 {
		t.Errorf("goroutines %d -> %d after deriving 100 contexts, want no goroutine each", before, after)
	}
	for _, c := range cancels {
		c()
	}
}
