package redislock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/locktest"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// Watchdogs, waiters and the shared Pub/Sub connection must all stop.
// The servers of lockenv are stopped before goleak looks.
func TestMain(m *testing.M) { goleak.VerifyTestMain(lockenv.Wrap(m), lockenv.ProxyGoroutines()...) }

func newBackend(t *testing.T, client *redis.Client) *redislock.Backend {
	t.Helper()
	b := redislock.New(client)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestContract(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Harness {
		client := lockenv.Redis(t)
		return locktest.Harness{
			Backend: newBackend(t, client),
			Delete:  func(key string) { client.Del(context.Background(), key) },
			Wipe:    func(key string) { client.Del(context.Background(), key, redislock.FenceKey(key)) },
		}
	})
}

func TestKeyHoldsTheOwnersTokenUnderItsExactName(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	key := "lock:{schedule:" + lockenv.Name("") + "}:seat:7"
	ctx := context.Background()

	l, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	value, err := client.Get(ctx, key).Result()
	if err != nil || len(value) != 32 {
		t.Fatalf("GET %s = %q, %v; want the 32-hex-digit owner token", key, value, err)
	}
	if pttl := client.PTTL(ctx, key).Val(); pttl <= 4*time.Second || pttl > 5*time.Second {
		t.Errorf("PTTL = %v, want in (4s, 5s]", pttl)
	}
	fence, err := client.Get(ctx, redislock.FenceKey(key)).Int64()
	if err != nil || fence != l.Fence() {
		t.Errorf("fence counter = %d (%v), want the lease's fence %d", fence, err, l.Fence())
	}
	if micros := time.Now().UnixMicro(); l.Fence() < micros-int64(time.Minute/time.Microsecond) {
		t.Errorf("first fence %d does not start from the server clock (%d µs)", l.Fence(), micros)
	}
}

func TestKeyWithoutHashTagGetsOne(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	key := lockenv.Name("jobs:report:")
	l, err := locker.Acquire(context.Background(), key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	if n := client.Exists(context.Background(), "{"+key+"}", "{"+key+"}:fence").Val(); n != 2 {
		t.Errorf("stored keys for an untagged name: %d of 2 under {%s}", n, key)
	}
}

func TestKeyWithoutExpiryReportsUnknownRemaining(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	key := "lock:{" + lockenv.Name("") + "}:seat:1"
	client.Set(context.Background(), key, "set-by-an-operator", 0)
	_, err := locker.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	var held *lock.HeldError
	if !errors.As(err, &held) || held.Remaining != 0 {
		t.Fatalf("got %v, want *HeldError with Remaining 0", err)
	}
}

// Fences keep growing when Redis loses everything: FLUSHALL, then a restart
// of a server without persistence.
func TestFencesSurviveFlushAndRestart(t *testing.T) {
	t.Parallel()
	server := lockenv.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = client.Close() })
	locker := lock.New(newBackend(t, client), lock.Config{})
	ctx := context.Background()
	const key = "lock:{schedule:1}:seat:1"

	fence := func() int64 {
		t.Helper()
		for range 50 { // the restarted server may need a moment
			l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second})
			if err == nil {
				_ = l.Release(ctx)
				return l.Fence()
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("could not acquire")
		return 0
	}
	first := fence()
	if err := client.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	afterFlush := fence()
	server.Restart()
	afterRestart := fence()
	if first >= afterFlush || afterFlush >= afterRestart {
		t.Fatalf("fences %d, %d, %d: want strictly increasing across FLUSHALL and restart", first, afterFlush, afterRestart)
	}
	t.Logf("fences: %s, after FLUSHALL %s, after restart %s",
		strconv.FormatInt(first, 10), strconv.FormatInt(afterFlush, 10), strconv.FormatInt(afterRestart, 10))
}

func TestUnreachableRedisIsUnavailable(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{
		Addr:                  "127.0.0.1:1", // nothing listens on port 1
		DialTimeout:           200 * time.Millisecond,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = client.Close() })
	locker := lock.New(newBackend(t, client), lock.Config{})
	t.Cleanup(locker.Close)
	for _, wait := range []time.Duration{0, time.Second} {
		_, err := locker.Acquire(context.Background(), "lock:{unreachable}:seat:1", lock.Options{TTL: time.Second, Wait: wait})
		if !errors.Is(err, lock.ErrUnavailable) {
			t.Errorf("Acquire (wait %v): got %v, want ErrUnavailable", wait, err)
		}
	}
}

func TestWakeUpLatency(t *testing.T) {
	t.Parallel()
	locktest.WakeUpLatency(t, newBackend(t, lockenv.Redis(t)), 100)
}

// One fence counter per hash tag: every seat of a schedule shares it.
func TestFenceKeyIsPerHashTag(t *testing.T) {
	for key, want := range map[string]string{
		"lock:{schedule:7}:seat:3":  "{schedule:7}:fence",
		"lock:{schedule:7}:seat:99": "{schedule:7}:fence",
		"jobs:nightly-report":       "{jobs:nightly-report}:fence",
		"odd:{}:key":                "{odd:{}:fence",
	} {
		if got := redislock.FenceKey(key); got != want {
			t.Errorf("FenceKey(%q) = %q, want %q", key, got, want)
		}
	}
}
