package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/ratelimit"
)

// scriptCalls counts the rate-limit scripts a client sends, alone or in a
// pipeline: the Redis calls a request may cost.
type scriptCalls struct{ n atomic.Int64 }

func (c *scriptCalls) count(cmd redis.Cmder) {
	if name := strings.ToLower(cmd.Name()); name == "evalsha" || name == "eval" {
		c.n.Add(1)
	}
}

func (c *scriptCalls) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *scriptCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.count(cmd)
		return next(ctx, cmd)
	}
}
func (c *scriptCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}

func uniqueName(prefix string) string { return prefix + strconv.Itoa(rand.IntN(1<<30)) }

// instances starts n limiters (instances) of one limit on one Redis, and
// syncs each once more so that every one knows there are n.
func instances(t *testing.T, client redis.UniversalClient, name string, perSecond, n int) []*ratelimit.Limiter {
	t.Helper()
	ls := make([]*ratelimit.Limiter, n)
	for i := range ls {
		ls[i] = ratelimit.New(client, name, perSecond)
		t.Cleanup(func() { _ = ls[i].Close() })
	}
	for _, l := range ls {
		if err := l.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := l.Instances(); got != n {
			t.Fatalf("an instance counts %d instances, want %d", got, n)
		}
	}
	return ls
}

// A crowd of clients well within their limit, spread over two instances,
// costs Redis no rate-limit call at all.
func TestClientsWithinTheirLimitCostNoRedisCall(t *testing.T) {
	t.Parallel()
	var calls scriptCalls
	client := lockenv.Redis(t)
	client.AddHook(&calls)
	ls := instances(t, client, uniqueName("within"), 100, 2)
	ctx := context.Background()
	for round := range 5 {
		for user := range 200 {
			// Each user sends 2 requests a round, alternating instances:
			// far below its share of 50 a second on each.
			for i := range 2 {
				ok, _, err := ls[(user+i+round)%2].Allow(ctx, "user"+strconv.Itoa(user))
				if err != nil || !ok {
					t.Fatalf("round %d, user %d: allowed %v, %v; want admitted", round, user, ok, err)
				}
			}
		}
	}
	if n := calls.n.Load(); n != 0 {
		t.Errorf("%d rate-limit scripts for 2,000 requests within their limit, want none", n)
	}
}

// hammer sends one key's requests round-robin over ls at rate a second
// for d, and returns how many were admitted, how many sent and the time
// it took; each refusal's Retry-After must be within two bursts' time
// (two seconds at a burst of a second's rate: a client may owe the budget
// what instances admitted on their own).
func hammer(t *testing.T, ls []*ratelimit.Limiter, rate int, d time.Duration) (admitted, sent int, elapsed time.Duration) {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	gap := time.Second / time.Duration(rate)
	for i := 0; time.Since(start) < d; i++ {
		// Paced by the clock, not by sleeps: a busy machine sends late
		// requests at once rather than fewer of them.
		if ahead := time.Until(start.Add(time.Duration(i) * gap)); ahead > 0 {
			time.Sleep(ahead)
		}
		ok, wait, err := ls[i%len(ls)].Allow(ctx, "greedy")
		if err != nil {
			t.Fatal(err)
		}
		sent++
		if ok {
			admitted++
		} else if wait <= 0 || wait > 2*time.Second {
			t.Fatalf("refused with Retry-After %v, want within two seconds", wait)
		}
	}
	return admitted, sent, time.Since(start)
}

// A client at twice its limit is refused about half the time, on one
// instance and spread over three: it is admitted at most its burst and
// its limit over the time it sent, plus what the instances admitted on
// their own and did not charge (at most half of each one's share of a
// second: half the limit in all), and at least its limit over the time,
// less that half.
func TestClientAtTwiceItsLimitIsRefused(t *testing.T) {
	t.Parallel()
	const perSecond = 100
	for _, n := range []int{1, 3} {
		t.Run(strconv.Itoa(n)+" instances", func(t *testing.T) {
			t.Parallel()
			ls := instances(t, lockenv.Redis(t), uniqueName("greedy"), perSecond, n)
			admitted, sent, elapsed := hammer(t, ls, 2*perSecond, 2*time.Second)
			rate := int(elapsed.Seconds() * perSecond)
			most := perSecond + rate + perSecond/2
			least := rate - perSecond/2
			if admitted > most || admitted < least {
				t.Errorf("%d instances: admitted %d of %d over %v; want %d to %d", n, admitted, sent, elapsed, least, most)
			}
			t.Logf("%d instances: admitted %d of %d over %v (limit %d/s, burst %d)", n, admitted, sent, elapsed, perSecond, perSecond)
		})
	}
}

// A client whose requests all reach one of three instances is not held
// to that instance's share: past it, the instance asks Redis, and the
// client gets its whole limit.
func TestClientOnOneOfThreeInstancesGetsItsWholeLimit(t *testing.T) {
	t.Parallel()
	const perSecond = 60
	ls := instances(t, lockenv.Redis(t), uniqueName("sticky"), perSecond, 3)
	admitted, sent, elapsed := hammer(t, ls[:1], perSecond/2, time.Second)
	if admitted != sent {
		t.Errorf("admitted %d of %d at half the limit over %v on one instance, want all", admitted, sent, elapsed)
	}
}

// A refusal is remembered: the requests before Retry-After are refused
// by the instance alone.
func TestRefusalIsRememberedLocally(t *testing.T) {
	t.Parallel()
	var calls scriptCalls
	client := lockenv.Redis(t)
	client.AddHook(&calls)
	l := instances(t, client, uniqueName("refused"), 5, 1)[0]
	ctx := context.Background()
	refused := 0
	for range 10 {
		ok, _, err := l.Allow(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			refused++
		}
	}
	before := calls.n.Load()
	for range 100 {
		if ok, wait, err := l.Allow(ctx, "alice"); err != nil || ok || wait <= 0 {
			t.Fatalf("after a refusal: allowed %v, retry after %v, %v; want refused", ok, wait, err)
		}
	}
	if refused == 0 {
		t.Fatal("10 requests at a limit of 5 with a burst of 5: none refused")
	}
	if n := calls.n.Load() - before; n != 0 {
		t.Errorf("%d Redis calls for requests refused before Retry-After, want none", n)
	}
}

// With Redis away, a client within its share is still admitted locally;
// past it, Allow says it cannot tell.
func TestRedisDownIsAnErrorPastTheLocalShare(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	l := ratelimit.New(client, uniqueName("down"), 4)
	t.Cleanup(func() { _ = l.Close() })
	_ = client.Close()
	ctx := context.Background()
	for i := range 4 {
		if ok, _, err := l.Allow(ctx, "alice"); err != nil || !ok {
			t.Fatalf("request %d within the share: allowed %v, %v; want admitted", i, ok, err)
		}
	}
	if _, _, err := l.Allow(ctx, "alice"); err == nil {
		t.Fatal("past the local share on a closed client: want an error")
	}
}

// Instances learn how many they are; one that closes leaves the registry
// and the others take over its share.
func TestInstancesShareTheLimit(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	name := uniqueName("registry")
	ls := instances(t, client, name, 90, 3)
	if err := ls[2].Close(); err != nil {
		t.Fatal(err)
	}
	if err := ls[0].Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ls[0].Instances(); got != 2 {
		t.Errorf("after one of three closed: %d instances, want 2", got)
	}
	ls[2] = ratelimit.New(client, name, 90) // for the cleanup's Close
}
