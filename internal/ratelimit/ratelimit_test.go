package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/ratelimit"
	"github.com/seatlock/seatlock/internal/testenv"
)

// Two limiters on one Redis, as two instances have, share one budget per
// key; other keys have budgets of their own.
func TestLimitIsSharedByInstancesAndKeptPerKey(t *testing.T) {
	t.Parallel()
	name := "test" + strconv.Itoa(rand.IntN(1<<30))
	a := ratelimit.New(testenv.Redis(t), name, 4)
	b := ratelimit.New(testenv.Redis(t), name, 4)
	ctx := context.Background()
	allowed := 0
	start := time.Now()
	for i := range 8 {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, wait, err := l.Allow(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		} else if wait <= 0 || wait > time.Second {
			t.Errorf("refused with retry after %v, want within the second", wait)
		}
	}
	// Four a second with a burst of four: the burst, and one more for
	// each quarter second the calls took.
	if most := 4 + int(time.Since(start)/(250*time.Millisecond)); allowed < 4 || allowed > most {
		t.Errorf("admitted %d of 8 calls over %v, want 4 to %d", allowed, time.Since(start), most)
	}
	if ok, _, err := a.Allow(ctx, "bob"); err != nil || !ok {
		t.Errorf("another key: allowed %v, %v; want its own budget", ok, err)
	}
}

func TestRedisDownIsAnError(t *testing.T) {
	t.Parallel()
	client := testenv.Redis(t)
	l := ratelimit.New(client, "down", 4)
	_ = client.Close()
	if _, _, err := l.Allow(context.Background(), "alice"); err == nil {
		t.Fatal("Allow on a closed client: want an error")
	}
}

// countCalls counts the commands a client sends.
type countCalls struct{ n atomic.Int64 }

func (c *countCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *countCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *countCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// At higher rates an instance takes a batch of places per call to Redis:
// the limit still holds, within a batch per instance, and Redis sees a
// call per batch rather than per request.
func TestBatchesKeepTheLimitWithFewCalls(t *testing.T) {
	t.Parallel()
	const perSecond, batch = 200, 10
	name := "batch" + strconv.Itoa(rand.IntN(1<<30))
	var calls countCalls
	client := testenv.Redis(t)
	client.AddHook(&calls)
	a := ratelimit.New(client, name, perSecond)
	b := ratelimit.New(client, name, perSecond)
	ctx := context.Background()
	start := time.Now()
	admitted := 0
	const requests = 600
	for i := range requests {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, _, err := l.Allow(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted++
		}
	}
	elapsed := time.Since(start)
	// The burst, plus what the rate allowed meanwhile, plus a batch per
	// instance; at least the burst less what each instance may leave
	// unspent.
	most := perSecond + int(elapsed.Seconds()*perSecond) + 2*batch
	if least := perSecond - 2*batch; admitted < least || admitted > most {
		t.Errorf("admitted %d of %d over %v; want %d to %d", admitted, requests, elapsed, least, most)
	}
	if n := calls.n.Load(); n > requests/2 {
		t.Errorf("%d calls to Redis for %d requests; want about one per batch of %d", n, requests, batch)
	}
}
