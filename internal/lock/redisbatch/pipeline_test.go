package redisbatch_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redisbatch"
)

// incrBy adds n to key and returns the sum: a script, so that the batch
// carries script calls as the lock backend's do.
var incrBy = redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)

func waitPending(t *testing.T, p *redisbatch.Pipeline, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Pending() != n {
		if time.Now().After(deadline) {
			t.Fatalf("pending = %d, want %d", p.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Calls that arrive while the one lane is busy go to Redis in one
// pipeline, and each gets its own replies.
func TestBusyPipelineSendsQueuedCallsTogether(t *testing.T) {
	client := lockenv.Redis(t)
	g := lockenv.NewGate(true)
	client.AddHook(g)
	p := redisbatch.New(client, 1)
	prefix := lockenv.Name("batch-")
	ctx := context.Background()

	first := make(chan *redis.Cmd, 1)
	go func() { first <- p.Script(ctx, incrBy, []string{prefix + ":first"}, 1) }()
	<-g.Held()
	const n = 20
	var wg sync.WaitGroup
	replies := make([][]*redis.Cmd, n)
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("%s:%d", prefix, i)
			replies[i] = p.Do(ctx,
				redisbatch.Command{Script: incrBy, Keys: []string{key}, Args: []any{i}},
				redisbatch.Command{Args: []any{"incrby", key, 1000}},
			)
		})
	}
	waitPending(t, p, n)
	g.Open()
	wg.Wait()
	if got, err := (<-first).Int64(); err != nil || got != 1 {
		t.Fatalf("first call = %d, %v", got, err)
	}
	for i, r := range replies {
		a, errA := r[0].Int64()
		b, errB := r[1].Int64()
		if errA != nil || errB != nil || a != int64(i) || b != int64(i)+1000 {
			t.Errorf("call %d replies = %d (%v), %d (%v); want %d, %d", i, a, errA, b, errB, i, i+1000)
		}
	}
	if got := g.Pipelines(); !slices.Equal(got, []int{2 * n}) {
		t.Errorf("pipelines = %v, want one of %d commands (the lone first call is no pipeline)", got, 2*n)
	}
}

// A script that fails in Redis fails its own command only.
func TestErrorReplyStaysWithItsCommand(t *testing.T) {
	client := lockenv.Redis(t)
	key := lockenv.Name("batch-")
	ctx := context.Background()
	if err := client.RPush(ctx, key+":list", "x").Err(); err != nil {
		t.Fatal(err)
	}
	g := lockenv.NewGate(true)
	client.AddHook(g)
	p := redisbatch.New(client, 1)
	go p.Script(ctx, incrBy, []string{key + ":first"}, 1)
	<-g.Held()
	bad := make(chan *redis.Cmd, 1)
	good := make(chan *redis.Cmd, 1)
	go func() { bad <- p.Script(ctx, incrBy, []string{key + ":list"}, 1) }()
	go func() { good <- p.Script(ctx, incrBy, []string{key + ":n"}, 5) }()
	waitPending(t, p, 2)
	g.Open()
	var reply redis.Error
	if err := (<-bad).Err(); !errors.As(err, &reply) {
		t.Errorf("INCRBY on a list = %v, want Redis's error reply", err)
	}
	if n, err := (<-good).Int64(); err != nil || n != 5 {
		t.Errorf("the other call = %d, %v; want 5", n, err)
	}
}

// A batch whose scripts Redis has forgotten (restart, SCRIPT FLUSH) loads
// them and still answers every call.
func TestForgottenScriptsAreLoaded(t *testing.T) {
	server := lockenv.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = client.Close() })
	g := lockenv.NewGate(true)
	client.AddHook(g)
	p := redisbatch.New(client, 1)
	ctx := context.Background()
	go p.Script(ctx, incrBy, []string{"first"}, 1)
	<-g.Held()
	var wg sync.WaitGroup
	replies := make([]*redis.Cmd, 10)
	for i := range replies {
		wg.Go(func() { replies[i] = p.Script(ctx, incrBy, []string{fmt.Sprint("k", i)}, i+1) })
	}
	waitPending(t, p, len(replies))
	admin := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	g.Open()
	wg.Wait()
	for i, r := range replies {
		if n, err := r.Int64(); err != nil || n != int64(i+1) {
			t.Errorf("call %d after SCRIPT FLUSH = %d, %v", i, n, err)
		}
	}
}

// Laid-out script calls (Lay) go in one batch like any other, each with its
// own reply, and are loaded again when Redis has forgotten their script,
// in a batch and alone (RunLaid).
func TestLaidCallsAreBatchedAndLoadedAgain(t *testing.T) {
	server := lockenv.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = client.Close() })
	g := lockenv.NewGate(true)
	client.AddHook(g)
	p := redisbatch.New(client, 1)
	ctx := context.Background()
	laid := func(key string, n int) redisbatch.Laid {
		return redisbatch.Laid{Script: incrBy, Args: []any{"evalsha", incrBy.Hash(), 1, &key, n}}
	}
	go p.Lay(ctx, laid("first", 1))
	<-g.Held()
	var wg sync.WaitGroup
	replies := make([]*redis.Cmd, 10)
	for i := range replies {
		wg.Go(func() { replies[i] = p.Lay(ctx, laid(fmt.Sprint("k", i), i+1)) })
	}
	waitPending(t, p, len(replies))
	admin := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	g.Open()
	wg.Wait()
	if !slices.Contains(g.Pipelines(), len(replies)) {
		t.Errorf("pipelines %v: want the %d queued calls in one", g.Pipelines(), len(replies))
	}
	for i, r := range replies {
		if n, err := r.Int64(); err != nil || n != int64(i+1) {
			t.Errorf("call %d after SCRIPT FLUSH = %d, %v", i, n, err)
		}
	}
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := redisbatch.RunLaid(ctx, client, laid("alone", 7)).Int64(); err != nil || n != 7 {
		t.Errorf("lone call after SCRIPT FLUSH = %d, %v", n, err)
	}
}

// A caller whose context ends while its call waits for a batch gets its
// context's error at once, and its command is never sent.
func TestCallWithdrawnWhenItsContextEnds(t *testing.T) {
	client := lockenv.Redis(t)
	g := lockenv.NewGate(true)
	client.AddHook(g)
	p := redisbatch.New(client, 1)
	key := lockenv.Name("batch-")
	go p.Script(context.Background(), incrBy, []string{key + ":first"}, 1)
	<-g.Held()
	ctx, cancel := context.WithCancel(context.Background())
	reply := make(chan *redis.Cmd, 1)
	go func() { reply <- p.Script(ctx, incrBy, []string{key}, 1) }()
	waitPending(t, p, 1)
	cancel()
	if err := (<-reply).Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("reply = %v, want context.Canceled", err)
	}
	g.Open()
	if p.Pending() != 0 {
		t.Errorf("pending = %d after the caller left", p.Pending())
	}
	time.Sleep(50 * time.Millisecond) // a batch sent for it would have run by now
	if n, err := client.Exists(context.Background(), key).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS %s = %d, %v: the withdrawn command ran", key, n, err)
	}
}

// A batch that cannot reach Redis gives each of its calls that failure.
func TestUnreachableRedisFailsEveryCall(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	_ = listener.Close() // nothing listens there now
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	p := redisbatch.New(client, 1)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			replies := p.Do(context.Background(),
				redisbatch.Command{Script: incrBy, Keys: []string{"k"}, Args: []any{i}},
				redisbatch.Command{Args: []any{"ping"}})
			for _, r := range replies {
				var opErr *net.OpError
				if !errors.As(r.Err(), &opErr) {
					t.Errorf("call %d: reply error %v, want the dial failure", i, r.Err())
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkLoneCall is a script call on an idle Pipeline beside the same
// call made directly: batching must add nothing when nothing waits.
func BenchmarkLoneCall(b *testing.B) {
	client := lockenv.Redis(b)
	key := lockenv.Name("batch-bench-")
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := incrBy.Run(ctx, client, []string{key}, 1).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batched", func(b *testing.B) {
		p := redisbatch.New(client, redisbatch.DefaultLanes)
		for b.Loop() {
			if err := p.Script(ctx, incrBy, []string{key}, 1).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkConcurrentCalls is many callers at once, batched or each alone.
func BenchmarkConcurrentCalls(b *testing.B) {
	client := lockenv.Redis(b)
	key := lockenv.Name("batch-bench-")
	ctx := context.Background()
	for _, lanes := range []int{0, redisbatch.DefaultLanes} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) {
			p := redisbatch.New(client, lanes)
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := p.Script(ctx, incrBy, []string{key}, 1).Err(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// refuseScriptLoad fails every SCRIPT LOAD before it is sent.
type refuseScriptLoad struct{}

func (refuseScriptLoad) DialHook(next redis.DialHook) redis.DialHook { return next }
func (refuseScriptLoad) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (refuseScriptLoad) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "script" {
			cmd.SetErr(errLoadRefused)
			return errLoadRefused
		}
		return next(ctx, cmd)
	}
}

var errLoadRefused = errors.New("script load refused")

// A forgotten script that cannot be loaded again fails its call with the
// load's error, not with NOSCRIPT.
func TestLaidCallFailsWithTheLoadsError(t *testing.T) {
	server := lockenv.StartRedis(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = client.Close() })
	client.AddHook(refuseScriptLoad{})
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	key := "k"
	cmd := redisbatch.RunLaid(ctx, client, redisbatch.Laid{Script: incrBy, Args: []any{"evalsha", incrBy.Hash(), 1, &key, 1}})
	if !errors.Is(cmd.Err(), errLoadRefused) {
		t.Errorf("call = %v, want the load's error", cmd.Err())
	}
}
