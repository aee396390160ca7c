package seatfeed_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// BenchmarkReadRound measures one round of the instance's read of every
// followed stream (one XREAD of them all, none with a new entry) by how
// many schedules the instance follows: the round is issued again after
// every change of any of them, so its cost is what each followed schedule
// adds to every active one's.
func BenchmarkReadRound(b *testing.B) {
	rdb := lockenv.Redis(b)
	ctx := context.Background()
	for _, n := range []int{1, 100, 1_000, 10_000} {
		b.Run(fmt.Sprintf("schedules=%d", n), func(b *testing.B) {
			first := rand.Int64N(1 << 40)
			streams := make([]string, 2*n)
			for i := range n {
				key := seatfeed.StreamKey(first + int64(i))
				last, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"seat", 1, "status", "held"}}).Result()
				if err != nil {
					b.Fatal(err)
				}
				streams[i], streams[n+i] = key, last // after the last entry: nothing to read
			}
			b.Cleanup(func() { deleteKeys(b, rdb, streams[:n]) })
			calls, usec := xreadStats(b, rdb)
			for b.Loop() {
				if err := rdb.XRead(ctx, &redis.XReadArgs{Streams: streams, Count: 512, Block: -1}).Err(); err != nil && err != redis.Nil {
					b.Fatal(err)
				}
			}
			callsAfter, usecAfter := xreadStats(b, rdb)
			b.ReportMetric(float64(usecAfter-usec)/float64(callsAfter-calls), "redis-µs/round")
		})
	}
}

// BenchmarkPositions measures the once-a-second check of an instance's
// kept seat images: one pipeline of an XINFO STREAM per followed
// schedule.
func BenchmarkPositions(b *testing.B) {
	rdb := lockenv.Redis(b)
	f := seatfeed.New(rdb, seatfeed.Config{})
	b.Cleanup(f.Close)
	ctx := context.Background()
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprintf("schedules=%d", n), func(b *testing.B) {
			first := rand.Int64N(1 << 40)
			ids := make([]int64, n)
			keys := make([]string, n)
			for i := range ids {
				ids[i], keys[i] = first+int64(i), seatfeed.StreamKey(first+int64(i))
				if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: keys[i], Values: []any{"seat", 1, "status", "held"}}).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.Cleanup(func() { deleteKeys(b, rdb, keys) })
			calls, usec := commandStats(b, rdb, "xinfo|stream")
			for b.Loop() {
				for _, at := range f.Positions(ctx, ids) {
					if at.Err != nil {
						b.Fatal(at.Err)
					}
				}
			}
			callsAfter, usecAfter := commandStats(b, rdb, "xinfo|stream")
			b.ReportMetric(float64(usecAfter-usec)/float64(callsAfter-calls), "redis-µs/stream")
		})
	}
}

// xreadStats reads Redis's count of XREAD calls and the microseconds it
// spent in them.
func xreadStats(b *testing.B, rdb *redis.Client) (calls, usec int64) {
	return commandStats(b, rdb, "xread")
}

// commandStats reads Redis's count of a command's calls and the
// microseconds it spent in them.
func commandStats(b *testing.B, rdb *redis.Client, command string) (calls, usec int64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":"); ok {
			if _, err := fmt.Sscanf(rest, "calls=%d,usec=%d,", &calls, &usec); err != nil {
				b.Fatal(err)
			}
		}
	}
	return calls, usec
}

func deleteKeys(b *testing.B, rdb *redis.Client, keys []string) {
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), 1000)]
		keys = keys[len(chunk):]
		if err := rdb.Del(context.Background(), chunk...).Err(); err != nil {
			b.Error(err)
		}
	}
}
