package redislock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/redislock"
	"github.com/seatlock/seatlock/internal/testenv"
)

func newLocker(t *testing.T) (*redislock.Locker, *redis.Client, string) {
	t.Helper()
	client := testenv.Redis(t)
	key := "lock:{" + testenv.Name("test:") + "}:seat:1"
	t.Cleanup(func() { client.Del(context.Background(), key) })
	return redislock.New(client, nil), client, key
}

func TestAcquireStoresTokenWithTTL(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx := context.Background()

	lease, err := locker.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if lease.Key() != key {
		t.Errorf("Key() = %q, want %q", lease.Key(), key)
	}
	value, err := client.Get(ctx, key).Result()
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	if len(value) != 32 {
		t.Errorf("stored token %q: want 32 hex characters", value)
	}
	pttl := client.PTTL(ctx, key).Val()
	if pttl <= 4*time.Second || pttl > 5*time.Second {
		t.Errorf("PTTL = %v, want in (4s, 5s]", pttl)
	}
}

func TestAcquireHeldReportsRemainingTTL(t *testing.T) {
	t.Parallel()
	locker, _, key := newLocker(t)
	ctx := context.Background()

	if _, err := locker.Acquire(ctx, key, 3*time.Second); err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	_, err := locker.Acquire(ctx, key, 3*time.Second)
	var held *lock.HeldError
	if !errors.As(err, &held) || !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("second Acquire: got %v, want *lock.HeldError", err)
	}
	if held.Remaining <= 2*time.Second || held.Remaining > 3*time.Second {
		t.Errorf("Remaining = %v, want in (2s, 3s]", held.Remaining)
	}
	if held.Key != key {
		t.Errorf("HeldError.Key = %q, want %q", held.Key, key)
	}
}

func TestAcquireOnKeyWithoutExpiryReportsZeroRemaining(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx := context.Background()
	client.Set(ctx, key, "set-by-an-operator", 0)

	_, err := locker.Acquire(ctx, key, time.Second)
	var held *lock.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire: got %v, want *lock.HeldError", err)
	}
	if held.Remaining != 0 {
		t.Errorf("Remaining = %v, want 0 for a key without expiry", held.Remaining)
	}
}

func TestAcquireRejectsTinyTTL(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	_, err := locker.Acquire(context.Background(), key, time.Microsecond)
	if !errors.Is(err, lock.ErrInvalidTTL) {
		t.Fatalf("Acquire: got %v, want ErrInvalidTTL", err)
	}
	if n := client.Exists(context.Background(), key).Val(); n != 0 {
		t.Errorf("key exists after a rejected Acquire")
	}
}

func TestReleaseByOwnerFreesTheKey(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx := context.Background()

	lease, err := locker.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if n := client.Exists(ctx, key).Val(); n != 0 {
		t.Fatalf("key still exists after Release")
	}
	if err := lease.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Release: got %v, want ErrNotHeld", err)
	}
	if _, err := locker.Acquire(ctx, key, time.Second); err != nil {
		t.Errorf("Acquire after Release: %v", err)
	}
}

func TestReleaseNeverDeletesAnotherOwnersLock(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx := context.Background()

	lease, err := locker.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	// Another owner took the key (as after an expiry).
	client.Set(ctx, key, "someone-else", 5*time.Second)

	if err := lease.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Release: got %v, want ErrNotHeld", err)
	}
	if v := client.Get(ctx, key).Val(); v != "someone-else" {
		t.Errorf("key value = %q after foreign Release, want it untouched", v)
	}
}

func TestExpiredLeaseCannotReleaseItsSuccessor(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx := context.Background()

	first, err := locker.Acquire(ctx, key, 30*time.Millisecond)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	waitGone(t, client, key)
	second, err := locker.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Acquire after expiry: %v", err)
	}
	if err := first.Release(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("expired Release: got %v, want ErrNotHeld", err)
	}
	if _, err := locker.Acquire(ctx, key, time.Second); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("the successor's lock was lost: Acquire got %v, want ErrHeld", err)
	}
	if err := second.Release(ctx); err != nil {
		t.Errorf("successor Release: %v", err)
	}
}

func TestReleaseRunsAfterContextCancelled(t *testing.T) {
	t.Parallel()
	locker, client, key := newLocker(t)
	ctx, cancel := context.WithCancel(context.Background())

	lease, err := locker.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	cancel()
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release with a cancelled context: %v", err)
	}
	if n := client.Exists(context.Background(), key).Val(); n != 0 {
		t.Errorf("key still exists after Release with a cancelled context")
	}
}

func TestExactlyOneOfManyConcurrentAcquirersWins(t *testing.T) {
	t.Parallel()
	locker, _, key := newLocker(t)
	const goroutines = 1000
	var (
		wins, held atomic.Int64
		wg         sync.WaitGroup
		start      = make(chan struct{})
		errs       = make(chan error, goroutines)
	)
	for range goroutines {
		wg.Go(func() {
			<-start
			_, err := locker.Acquire(context.Background(), key, 10*time.Second)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, lock.ErrHeld):
				held.Add(1)
			default:
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("unexpected Acquire error: %v", err)
	}
	if wins.Load() != 1 || held.Load() != goroutines-1 {
		t.Fatalf("wins = %d, held = %d; want 1 and %d", wins.Load(), held.Load(), goroutines-1)
	}
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
	locker := redislock.New(client, nil)

	_, err := locker.Acquire(context.Background(), "lock:{unreachable}:seat:1", time.Second)
	if !errors.Is(err, lock.ErrUnavailable) {
		t.Fatalf("Acquire: got %v, want ErrUnavailable", err)
	}
}

func waitGone(t *testing.T, client *redis.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for client.Exists(context.Background(), key).Val() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("key %s did not expire", key)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
