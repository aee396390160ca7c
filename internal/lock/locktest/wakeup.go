package locktest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// WakeUpLatency measures, over trials, how long a waiter takes to hold the
// lock after its holder released it, and fails if any trial looks like a
// wake-up by TTL re-check rather than by the release. It logs the median,
// p90 and maximum: run with -v to read them.
func WakeUpLatency(t *testing.T, b backend.Backend, trials int) (median time.Duration) {
	t.Helper()
	c := client(t, b)
	ctx := context.Background()
	latencies := make([]time.Duration, 0, trials)
	for range trials {
		key := newKey()
		holder := mustAcquire(t, c, key, lock.Options{TTL: 30 * time.Second})
		acquired := make(chan time.Time, 1)
		go func() {
			l, err := c.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
			if err != nil {
				t.Errorf("waiter: %v", err)
				acquired <- time.Time{}
				return
			}
			acquired <- time.Now()
			_ = l.Release(ctx)
		}()
		time.Sleep(20 * time.Millisecond) // the waiter is subscribed and asleep
		released := time.Now()
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		at := <-acquired
		if at.IsZero() {
			return 0
		}
		latency := at.Sub(released)
		if latency > 5*time.Second {
			t.Fatalf("waiter woke %v after the release (holder TTL 30s): not woken by the release", latency)
		}
		latencies = append(latencies, latency)
	}
	slices.Sort(latencies)
	median = latencies[len(latencies)/2]
	t.Logf("wake-up latency after release over %d trials: median %v, p90 %v, max %v",
		trials, median, latencies[len(latencies)*9/10], latencies[len(latencies)-1])
	return median
}
