package redislock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// dropReplies resets every connection at the first reply the server sends
// through the proxy: the commands run, the client never hears of them.
type dropReplies struct{}

func (*dropReplies) Pipe(stub *toxics.ToxicStub) {
	select {
	case <-stub.Interrupt:
	case <-stub.Input:
		stub.Close()
	}
}

func init() { toxics.Register("drop_replies", new(dropReplies)) }

// A batch of acquisitions whose replies are lost: each caller is told the
// store is unavailable (503 for a booking), though Redis ran every one,
// and none of those locks is left behind: the callers' background
// releases free every key long before its TTL.
func TestFailedBatchFailsEachCallAndLeavesNoLock(t *testing.T) {
	t.Parallel()
	direct := lockenv.Redis(t)
	proxy, client := openThroughProxy(t, direct.Options().Addr)
	gate := lockenv.NewGate(false)
	client.AddHook(gate)
	backend := redislock.New(client, redislock.WithBatchLanes(1))
	t.Cleanup(func() { _ = backend.Close() })
	locker := lock.New(backend, lock.Config{})
	t.Cleanup(locker.Close)
	warmUp(t, locker)

	ctx := context.Background()
	tag := lockenv.Name("")
	keys := make([]string, 31)
	for i := range keys {
		keys[i] = fmt.Sprintf("lock:{%s}:seat:%d", tag, i+1)
	}
	counter := redislock.FenceKey(keys[0])
	first, err := locker.Acquire(ctx, keys[0], lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Release(ctx)
	before, err := direct.Get(ctx, counter).Int64()
	if err != nil {
		t.Fatal(err)
	}

	// Connections made under the fault would lose their handshake's
	// reply and never send a command: open beforehand one for every
	// attempt of the lone call and of the batch (go-redis retries each
	// on another connection).
	var conns []*redis.Conn
	for range 2 * (client.Options().MaxRetries + 1) {
		c := client.Conn()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		_ = c.Close()
	}

	gate.Arm() // the one lane's call is held before it is sent
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	wg.Go(func() { _, errs[0] = locker.Acquire(ctx, keys[0], lock.Options{TTL: 30 * time.Second}) })
	<-gate.Held()
	for i := 1; i < len(keys); i++ {
		wg.Go(func() { _, errs[i] = locker.Acquire(ctx, keys[i], lock.Options{TTL: 30 * time.Second}) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for redislock.PendingCalls(backend) != len(keys)-1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued, want %d", redislock.PendingCalls(backend), len(keys)-1)
		}
		time.Sleep(time.Millisecond)
	}
	proxy.AddToxic(lockenv.Toxic{Name: "drop", Type: "drop_replies", Stream: "downstream"})
	gate.Open()
	wg.Wait()
	proxy.RemoveToxic("drop")

	for i, err := range errs {
		if !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("acquire %d = %v, want ErrUnavailable", i, err)
		}
	}
	if !slices.Contains(gate.Pipelines(), len(keys)-1) {
		t.Errorf("pipelines %v: want the %d queued acquisitions in one", gate.Pipelines(), len(keys)-1)
	}
	after, err := direct.Get(ctx, counter).Int64()
	if err != nil || after-before < int64(len(keys)) {
		t.Fatalf("fence counter moved by %d (%v), want ≥ %d: the acquisitions did not run, the test proves nothing",
			after-before, err, len(keys))
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		n, err := direct.Exists(ctx, keys...).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d keys still held 10s after the failed batch (TTL 30s)", n, len(keys))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
