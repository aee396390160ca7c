package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// goroutinesPerCPU makes RunParallel use 8 goroutines on a 2-core machine:
// few enough that every call can have a connection of its own.
const goroutinesPerCPU = 4

// crowdPerCPU makes RunParallel use 128 goroutines on a 2-core machine: a
// crowd, where calls wait for one another and batching pays.
const crowdPerCPU = 64

// Every contender must lock: a second try on a held key fails, and the key
// is free again after the release.
func TestEveryContenderLocks(t *testing.T) {
	client := lockenv.Redis(t)
	ctx := context.Background()
	for _, c := range contenders(client) {
		t.Run(c.name, func(t *testing.T) {
			if c.close != nil {
				t.Cleanup(c.close)
			}
			key := lockenv.Name("bench:check:")
			release, ok, err := c.tryLock(ctx, key)
			if err != nil || !ok {
				t.Fatalf("first try: ok=%v err=%v, want the lock", ok, err)
			}
			if _, ok, err := c.tryLock(ctx, key); err != nil || ok {
				t.Fatalf("second try on a held key: ok=%v err=%v, want refused", ok, err)
			}
			if err := release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
			again, ok, err := c.tryLock(ctx, key)
			if err != nil || !ok {
				t.Fatalf("try after release: ok=%v err=%v, want the lock", ok, err)
			}
			if err := again(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
		})
	}
}

// benchFreeKeys acquires and releases a free key: each goroutine has keys
// of its own, so every try succeeds.
func benchFreeKeys(b *testing.B, client *redis.Client, c contender) {
	freeKeys(b, c, goroutinesPerCPU)
}

// benchFreeKeysCrowd is benchFreeKeys with a crowd of goroutines.
func benchFreeKeysCrowd(b *testing.B, client *redis.Client, c contender) {
	freeKeys(b, c, crowdPerCPU)
}

func freeKeys(b *testing.B, c contender, perCPU int) {
	prefix := "bench:{" + lockenv.Name("free") + "}:"
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(perCPU)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		key := prefix + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			release, ok, err := c.tryLock(ctx, key)
			if err != nil || !ok {
				b.Errorf("try a free key: ok=%v err=%v", ok, err)
				return
			}
			if err := release(ctx); err != nil {
				b.Errorf("release: %v", err)
				return
			}
		}
	})
}

// benchOneKey has every goroutine try the same key; whoever gets it
// releases it at once.
func benchOneKey(b *testing.B, client *redis.Client, c contender) {
	key := "bench:{" + lockenv.Name("one") + "}"
	b.ReportAllocs()
	b.SetParallelism(goroutinesPerCPU)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			release, ok, err := c.tryLock(ctx, key)
			if err != nil {
				b.Errorf("try: %v", err)
				return
			}
			if ok {
				if err := release(ctx); err != nil {
					b.Errorf("release: %v", err)
					return
				}
			}
		}
	})
}

func BenchmarkFreeKey(b *testing.B)      { runEach(b, benchFreeKeys) }
func BenchmarkFreeKeyCrowd(b *testing.B) { runEach(b, benchFreeKeysCrowd) }
func BenchmarkOneKey(b *testing.B)       { runEach(b, benchOneKey) }

func runEach(b *testing.B, bench func(*testing.B, *redis.Client, contender)) {
	client := lockenv.Redis(b)
	for _, c := range contenders(client) {
		b.Run(c.name, func(b *testing.B) { bench(b, client, c) })
		if c.close != nil {
			c.close()
		}
	}
}
