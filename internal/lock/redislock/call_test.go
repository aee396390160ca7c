package redislock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/locktest"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// scriptsOnly is a Client with nothing but what the Client interface
// names: no Do, so the backend sends its calls with redis.Script.Run, and
// no Pipeline, so it sends each alone.
type scriptsOnly struct{ redislock.Client }

func TestContractOnAClientWithoutDo(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Harness {
		client := lockenv.Redis(t)
		b := redislock.New(scriptsOnly{client})
		t.Cleanup(func() { _ = b.Close() })
		return locktest.Harness{
			Backend: b,
			Delete:  func(key string) { client.Del(context.Background(), key) },
			Wipe:    func(key string) { client.Del(context.Background(), key, redislock.FenceKey(key)) },
		}
	})
}

// Redis forgets its scripts on a restart or SCRIPT FLUSH: every call of a
// lease's life loads its script again and runs, alone or batched.
func TestForgottenScriptsAreLoadedAgain(t *testing.T) {
	client := lockenv.Redis(t)
	ctx := context.Background()
	for _, lanes := range []int{0, 1} {
		b := redislock.New(client, redislock.WithBatchLanes(lanes))
		t.Cleanup(func() { _ = b.Close() })
		locker := lock.New(b, lock.Config{})
		t.Cleanup(locker.Close)
		forget := func() {
			t.Helper()
			if err := client.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		key := "lock:{" + lockenv.Name("flush") + "}"

		forget()
		l, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second})
		if err != nil {
			t.Fatalf("lanes %d: acquire after SCRIPT FLUSH: %v", lanes, err)
		}
		forget()
		if err := l.Extend(ctx, 5*time.Second); err != nil {
			t.Fatalf("lanes %d: extend after SCRIPT FLUSH: %v", lanes, err)
		}
		forget()
		if err := l.(lock.Sealer).SealWithNote(ctx, 5*time.Second, "done"); err != nil {
			t.Fatalf("lanes %d: seal after SCRIPT FLUSH: %v", lanes, err)
		}
		forget()
		var sealed *lock.SealedError
		if _, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second}); !errors.As(err, &sealed) || sealed.Note != "done" {
			t.Fatalf("lanes %d: acquire of the sealed key after SCRIPT FLUSH = %v, want its seal", lanes, err)
		}
		forget()
		l, err = locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second, Unseal: true})
		if err != nil {
			t.Fatalf("lanes %d: unseal after SCRIPT FLUSH: %v", lanes, err)
		}
		forget()
		if err := l.Release(ctx); err != nil {
			t.Fatalf("lanes %d: release after SCRIPT FLUSH: %v", lanes, err)
		}
	}
}
