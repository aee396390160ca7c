package redislock_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/locktest"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// The cluster tests run on the 3-master Redis Cluster that `make test`
// starts (TEST_REDIS_CLUSTER_URL).

func newClusterBackend(t *testing.T, client *redis.ClusterClient) *redislock.Backend {
	t.Helper()
	b := redislock.New(client)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestClusterContract(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Harness {
		client := lockenv.RedisCluster(t)
		return locktest.Harness{
			Backend: newClusterBackend(t, client),
			Delete:  func(key string) { client.Del(context.Background(), key) },
			// One DEL of two keys: they share the key's hash tag, so
			// the cluster accepts it (no CROSSSLOT).
			Wipe: func(key string) {
				if err := client.Del(context.Background(), key, redislock.FenceKey(key)).Err(); err != nil {
					t.Errorf("wipe %s: %v", key, err)
				}
			},
		}
	})
}

// triesByKey counts TryAcquire calls per key, to tell a waiter woken by the
// release from one that polls or re-checks at the holder's TTL.
type triesByKey struct {
	backend.Backend
	mu    sync.Mutex
	tries map[string]int
}

func (b *triesByKey) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	b.mu.Lock()
	b.tries[key]++
	b.mu.Unlock()
	return b.Backend.TryAcquire(ctx, key, token, ttl)
}

func (b *triesByKey) count(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tries[key]
}

// Seat locks of different schedules spread over the masters, while each
// lock's own keys (the lock, "<key>:fence" and the "<key>:released"
// channel) stay in its schedule's slot; locking, waking waiters by the
// release and releasing work on every master.
func TestClusterSeatLocksSpreadOverMastersAndWork(t *testing.T) {
	t.Parallel()
	client := lockenv.RedisCluster(t)
	backend := newClusterBackend(t, client)
	counting := &triesByKey{Backend: backend, tries: map[string]int{}}
	holders, waiters := lock.New(backend, lock.Config{}), lock.New(counting, lock.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Schedules from a random base, so that parallel runs do not collide,
	// until every master owns some; 3 masters are all hit within a few
	// dozen schedules.
	base, err := strconv.ParseUint(lockenv.Name("")[:8], 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	masterOf := map[string]string{} // key -> master address
	perMaster := map[string]int{}
	var keys []string
	for n := base; len(keys) < 12 || len(perMaster) < 3; n++ {
		if len(keys) == 200 {
			t.Fatalf("200 schedules landed on %d master(s): %v", len(perMaster), perMaster)
		}
		key := fmt.Sprintf("lock:{schedule:%d}:seat:%d", n, n%40+1)
		master, err := client.MasterForKey(ctx, key)
		if err != nil {
			t.Fatalf("master for %s: %v", key, err)
		}
		addr := master.Options().Addr
		masterOf[key] = addr
		perMaster[addr]++
		keys = append(keys, key)
	}
	t.Logf("%d schedules over masters %v", len(keys), perMaster)

	for _, key := range keys {
		// The server's own slot computation: the hash tag puts the lock,
		// its fence counter and its release channel in one slot.
		slots := map[int64]bool{}
		for _, k := range []string{key, redislock.FenceKey(key), key + ":released"} {
			slot, err := client.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				t.Fatalf("CLUSTER KEYSLOT %s: %v", k, err)
			}
			slots[slot] = true
		}
		if len(slots) != 1 {
			t.Fatalf("%s, its fence and its channel are in slots %v, want one", key, slots)
		}
	}

	// Hold every seat, then queue one waiter per seat.
	leases := make(map[string]lock.Lease, len(keys))
	for _, key := range keys {
		l, err := holders.Acquire(ctx, key, lock.Options{TTL: 20 * time.Second})
		if err != nil {
			t.Fatalf("Acquire %s: %v", key, err)
		}
		leases[key] = l
		// Both keys of the lock are on the master that owns its slot.
		master, _ := client.MasterForKey(ctx, key)
		if n, err := master.Exists(ctx, key, redislock.FenceKey(key)).Result(); err != nil || n != 2 {
			t.Fatalf("on master %s: EXISTS %s and its fence = %d, %v; want 2", masterOf[key], key, n, err)
		}
	}
	type result struct {
		key   string
		lease lock.Lease
		err   error
		at    time.Time
	}
	results := make(chan result, len(keys))
	var waiting sync.WaitGroup
	for _, key := range keys {
		waiting.Go(func() {
			l, err := waiters.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second, Wait: 10 * time.Second})
			results <- result{key, l, err, time.Now()}
		})
	}
	// A waiter tries once, subscribes, tries once more and sleeps.
	for _, key := range keys {
		for counting.count(key) < 2 {
			if ctx.Err() != nil {
				t.Fatalf("waiter of %s never subscribed", key)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond)
	for _, key := range keys {
		if n := counting.count(key); n != 2 {
			t.Fatalf("waiter of %s tried %d times before the release, want 2 (no polling)", key, n)
		}
	}

	released := time.Now()
	for _, key := range keys {
		if err := leases[key].Release(ctx); err != nil {
			t.Fatalf("Release %s: %v", key, err)
		}
	}
	waiting.Wait()
	close(results)
	var slowest time.Duration
	woken := 0
	for r := range results {
		if r.err != nil {
			t.Errorf("waiter of %s (master %s): %v", r.key, masterOf[r.key], r.err)
			continue
		}
		woken++
		latency := r.at.Sub(released)
		slowest = max(slowest, latency)
		if latency > 2*time.Second {
			t.Errorf("waiter of %s (master %s) woke %v after the release (holder TTL 20s): not woken by it", r.key, masterOf[r.key], latency)
		}
		if n := counting.count(r.key); n != 3 {
			t.Errorf("waiter of %s: %d tries, want 3", r.key, n)
		}
		if prev := leases[r.key].Fence(); r.lease.Fence() <= prev {
			t.Errorf("%s: waiter's fence %d not above the holder's %d", r.key, r.lease.Fence(), prev)
		}
		if err := r.lease.Release(ctx); err != nil {
			t.Errorf("waiter Release %s: %v", r.key, err)
		}
		if n, err := client.Exists(ctx, r.key).Result(); err != nil || n != 0 {
			t.Errorf("%s after the last release: EXISTS = %d, %v; want 0", r.key, n, err)
		}
	}
	t.Logf("%d waiters on %d masters woken by release; slowest after %v", woken, len(perMaster), slowest)
}

// A key without a hash tag is stored as "{key}" so that its fence counter
// joins its slot; acquiring, waking a waiter and releasing work on it.
func TestClusterKeyWithoutHashTag(t *testing.T) {
	t.Parallel()
	client := lockenv.RedisCluster(t)
	locker := lock.New(newClusterBackend(t, client), lock.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := lockenv.Name("jobs:report:")

	l, err := locker.Acquire(ctx, key, lock.Options{TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := client.Exists(ctx, "{"+key+"}", "{"+key+"}:fence").Result(); err != nil || n != 2 {
		t.Fatalf("stored keys for an untagged name: EXISTS = %d, %v; want 2 under {%s}", n, err, key)
	}
	if n := client.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("the untagged name itself exists: the lock must live under {%s}", key)
	}

	acquired := make(chan error, 1)
	go func() {
		w, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 15 * time.Second})
		if err == nil {
			if w.Fence() <= l.Fence() {
				err = fmt.Errorf("waiter's fence %d not above %d", w.Fence(), l.Fence())
			}
			_ = w.Release(context.Background())
		}
		acquired <- err
	}()
	time.Sleep(300 * time.Millisecond) // the waiter is subscribed and asleep
	released := time.Now()
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-acquired; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if latency := time.Since(released); latency > 2*time.Second {
		t.Errorf("waiter woke %v after the release (holder TTL 10s)", latency)
	}
	if n := client.Exists(ctx, "{"+key+"}").Val(); n != 0 {
		t.Errorf("{%s} still exists after both releases", key)
	}
}
