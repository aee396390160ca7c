package redislock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// resetFirstReply drops the first chunk the server sends through the proxy
// and resets that connection: the command ran, its reply is lost, and the
// client sees a reset connection. Later chunks pass.
type resetFirstReply struct{ fired atomic.Bool }

func (r *resetFirstReply) Pipe(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil || r.fired.CompareAndSwap(false, true) {
				stub.Close()
				return
			}
			select {
			case stub.Output <- c:
			case <-stub.Interrupt:
				return
			}
		}
	}
}

func init() { toxics.Register("reset_first_reply", new(resetFirstReply)) }

// openThroughProxy is a client with a lock client's production settings
// (lockenv.RedisAt), whose connections go through a fault proxy to addr.
func openThroughProxy(t *testing.T, addr string) (*lockenv.Proxy, *redis.Client) {
	t.Helper()
	proxy := lockenv.NewProxy(t, addr)
	return proxy, lockenv.RedisAt(t, proxy.Addr())
}

// privateRedis starts a redis-server of the test's own (for faults that
// would disturb other tests) and returns it, a Client on it with a lock
// client's production settings (lockenv.RedisAt), and a plain client for
// the test's own commands.
func privateRedis(t *testing.T, cfg lock.Config) (*lockenv.RedisProcess, *lock.Client, *redis.Client) {
	t.Helper()
	server := lockenv.StartRedis(t)
	client := lockenv.RedisAt(t, server.Addr)
	direct := redis.NewClient(&redis.Options{Addr: server.Addr})
	t.Cleanup(func() { _ = direct.Close() })
	locker := lock.New(newBackend(t, client), cfg)
	t.Cleanup(locker.Close)
	return server, locker, direct
}

// warmUp loads the scripts, so that under a fault the acquire script itself
// runs (a lost reply to loading it would stop it from running; AcquireAll's
// too), and, with a
// deadline, has the backend measure the server's clock, so that under a
// fault the acquire is sent, not that measurement. Its key is
// the test's own: parallel tests warm up on the one shared Redis at the
// same moment, and on a common key one of them found it held by the other.
func warmUp(t *testing.T, locker *lock.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "lock:{" + lockenv.Name("warm-up-") + "}:k"
	l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	all, err := locker.AcquireAll(ctx, []string{key, key + "2"}, lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The acquire ran but its reply was lost to a connection reset; go-redis
// sends the same script with the same token again. That retry must get the
// caller its own lock, with the fence of the first run, rather than report
// the lock "held by another owner".
func TestRetriedAcquireAfterLostReplyGetsItsOwnLock(t *testing.T) {
	t.Parallel()
	direct := lockenv.Redis(t)
	proxy, client := openThroughProxy(t, direct.Options().Addr)
	backend := newBackend(t, client)
	locker := lock.New(backend, lock.Config{})
	t.Cleanup(locker.Close)
	warmUp(t, locker)

	key := "lock:{" + lockenv.Name("") + "}:seat:1"
	proxy.AddToxic(lockenv.Toxic{Name: "reset", Type: "reset_first_reply"})
	l, err := locker.Acquire(context.Background(), key, lock.Options{TTL: 10 * time.Second})
	proxy.RemoveToxic("reset")
	if err != nil {
		t.Fatalf("Acquire whose first reply was lost: %v; want the caller's own lock", err)
	}
	defer func() { _ = l.Release(context.Background()) }()
	counter, err := direct.Get(context.Background(), redislock.FenceKey(key)).Int64()
	if err != nil || counter != l.Fence() {
		t.Errorf("fence counter = %d (%v), lease fence %d: want one fence minted, the lease's", counter, err, l.Fence())
	}
}

// Redis stalls (SIGSTOP) while an acquire is in flight; the caller gives up
// at its deadline; Redis resumes and runs the queued acquire. The key must
// not stay locked by that orphan token for its whole TTL: it is free again
// within seconds of Redis answering.
func TestStalledRedisDoesNotOrphanTheKey(t *testing.T) {
	t.Parallel()
	server, locker, direct := privateRedis(t, lock.Config{})
	warmUp(t, locker)

	const key = "lock:{schedule:1}:seat:1"
	times := timeCalls(t, direct)
	server.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := locker.Acquire(ctx, key, lock.Options{TTL: 20 * time.Second})
	cancel()
	if err == nil || errors.Is(err, lock.ErrHeld) {
		t.Fatalf("Acquire on a stalled Redis = %v, want an error", err)
	}
	time.Sleep(200 * time.Millisecond)
	server.Resume()

	waitForQueuedAcquire(t, direct, key, times)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := direct.Exists(context.Background(), key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still held by the abandoned acquire 5s after Redis resumed (TTL 20s, PTTL %v)",
				key, direct.PTTL(context.Background(), key).Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// timeCalls is how many times the server has run TIME, from scripts too:
// the acquire scripts read the clock to check their deadline
// (deadline.lua), and mint_fence to restart a lost counter.
func timeCalls(t *testing.T, direct *redis.Client) int64 {
	t.Helper()
	info, err := direct.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(info, "cmdstat_time:calls=")
	if !found {
		return 0
	}
	n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
	if err != nil {
		t.Fatalf("commandstats: %v", err)
	}
	return n
}

// waitForQueuedAcquire waits until the acquire queued in a stalled server
// has run: it read the server's clock (TIME, to check its deadline), or,
// refusing no late acquire, minted key's fence. It fails the test after 3 s:
// a test whose acquire never ran proves nothing.
func waitForQueuedAcquire(t *testing.T, direct *redis.Client, key string, timesBefore int64) {
	t.Helper()
	give := time.Now().Add(3 * time.Second)
	for timeCalls(t, direct) == timesBefore && direct.Exists(context.Background(), redislock.FenceKey(key)).Val() == 0 {
		if time.Now().After(give) {
			t.Fatal("the queued acquire never ran: the test proves nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Redis stalls for twice the lock's TTL while an acquire is in flight; its
// caller gives up long before. When Redis resumes and runs the queued
// acquire, that acquire is past its caller's deadline (in Redis's clock)
// and takes nothing: the key is free within a second of the resume, not
// held by a token nobody will use until its TTL runs out. Once for
// Acquire, once for AcquireAll.
func TestAcquireQueuedPastItsDeadlineTakesNothing(t *testing.T) {
	t.Parallel()
	const (
		ttl   = 2 * time.Second
		stall = 2 * ttl
	)
	keys := []string{"lock:{schedule:1}:seat:1", "lock:{schedule:1}:seat:2"}
	for _, tc := range []struct {
		name    string
		keys    []string
		acquire func(context.Context, *lock.Client) error
	}{
		{"Acquire", keys[:1], func(ctx context.Context, l *lock.Client) error {
			_, err := l.Acquire(ctx, keys[0], lock.Options{TTL: ttl})
			return err
		}},
		{"AcquireAll", keys, func(ctx context.Context, l *lock.Client) error {
			_, err := l.AcquireAll(ctx, keys, lock.Options{TTL: ttl})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			server, locker, direct := privateRedis(t, lock.Config{})
			warmUp(t, locker)
			times := timeCalls(t, direct)

			server.Pause()
			paused := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			err := tc.acquire(ctx, locker)
			cancel()
			if err == nil || errors.Is(err, lock.ErrHeld) {
				server.Resume()
				t.Fatalf("acquire on a stalled Redis = %v, want an error", err)
			}
			time.Sleep(time.Until(paused.Add(stall)))
			server.Resume()
			resumed := time.Now()

			waitForQueuedAcquire(t, direct, tc.keys[0], times)
			// Free within a second of the resume, and free for good:
			// not set and then released.
			for time.Since(resumed) < time.Second {
				n, err := direct.Exists(context.Background(), tc.keys...).Result()
				if err != nil {
					t.Fatal(err)
				}
				if n != 0 {
					t.Fatalf("%d of %v held %v after Redis resumed from a %v stall (TTL %v, PTTL %v): the acquire queued past its caller's deadline took the lock",
						n, tc.keys, time.Since(resumed).Round(time.Millisecond), stall, ttl,
						direct.PTTL(context.Background(), tc.keys[0]).Val())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := direct.Exists(context.Background(), redislock.FenceKey(tc.keys[0])).Val(); n != 0 {
				t.Errorf("fence counter minted by the refused acquire")
			}
			l, err := locker.AcquireAll(context.Background(), tc.keys, lock.Options{TTL: ttl})
			if err != nil {
				t.Fatalf("acquire after the resume: %v", err)
			}
			_ = l.Release(context.Background())
		})
	}
}

// The waiters' Pub/Sub connection is killed and the holder releases before
// go-redis has re-subscribed: the release message is lost. The waiter must
// still get the lock right away (woken by the re-subscription), not at the
// holder's TTL.
func TestReleaseDuringPubSubReconnectIsSeen(t *testing.T) {
	t.Parallel()
	_, locker, admin := privateRedis(t, lock.Config{MaxWait: 15 * time.Second})
	ctx := context.Background()

	const key = "lock:{schedule:1}:seat:1"
	holder, err := locker.Acquire(ctx, key, lock.Options{TTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Release(ctx) }()
	got := make(chan error, 1)
	go func() {
		l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 15 * time.Second})
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(500 * time.Millisecond) // the waiter is subscribed and asleep

	// In one transaction: the Pub/Sub connection dies, then the holder's
	// key goes and the release is published, to nobody.
	released := time.Now()
	if _, err := admin.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ClientKillByFilter(ctx, "TYPE", "pubsub")
		p.Del(ctx, key)
		p.Publish(ctx, key+":released", "1")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if waited := time.Since(released); waited > 3*time.Second {
		t.Fatalf("waiter got the lock %v after the release (holder TTL 20s): the reconnect's missed release was not re-checked", waited)
	}
}

// Keys of different cluster slots are refused before Redis is asked, on a
// standalone server too.
func TestAcquireAllRefusesCrossSlotKeys(t *testing.T) {
	t.Parallel()
	locker := lock.New(newBackend(t, lockenv.Redis(t)), lock.Config{})
	t.Cleanup(locker.Close)
	tag := lockenv.Name("")
	_, err := locker.AcquireAll(context.Background(),
		[]string{"lock:{" + tag + "a}:seat:1", "lock:{" + tag + "b}:seat:1"}, lock.Options{TTL: time.Second})
	if !errors.Is(err, redislock.ErrCrossSlot) {
		t.Fatalf("AcquireAll over two hash tags = %v, want ErrCrossSlot", err)
	}
}

// Fence counters expire when their key is not locked for a day, and every
// 64th acquisition refreshes them.
func TestFenceCounterExpires(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	t.Cleanup(locker.Close)
	key := "lock:{" + lockenv.Name("") + "}:seat:1"
	l, err := locker.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(context.Background())
	pttl := client.PTTL(context.Background(), redislock.FenceKey(key)).Val()
	if pttl < redislock.FenceCounterTTL-time.Minute || pttl > redislock.FenceCounterTTL+time.Minute {
		t.Errorf("fence counter PTTL = %v, want about %v", pttl, redislock.FenceCounterTTL)
	}

	client.PExpire(context.Background(), redislock.FenceKey(key), time.Hour)
	for range 64 {
		l, err := locker.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Release(context.Background())
	}
	if pttl := client.PTTL(context.Background(), redislock.FenceKey(key)).Val(); pttl < redislock.FenceCounterTTL-time.Minute {
		t.Errorf("fence counter PTTL after 64 more acquisitions = %v, want refreshed to about %v", pttl, redislock.FenceCounterTTL)
	}
}

// Waiters that give up while subscribing, followed at once by a waiter that
// stays: the one that stays must be subscribed for real when it sleeps (an
// earlier, abandoned SUBSCRIBE's confirmation must not stand for it), so the
// release wakes it, every time.
func TestWaiterAfterAbandonedSubscribeIsWoken(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	t.Cleanup(locker.Close)
	ctx := context.Background()
	for i := range 20 {
		key := "lock:{" + lockenv.Name("") + "}:seat:1"
		holder, err := locker.Acquire(ctx, key, lock.Options{TTL: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 { // give up during the subscribe
			short, cancel := context.WithTimeout(ctx, time.Duration(i%3)*100*time.Microsecond)
			_, _ = locker.Acquire(short, key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
			cancel()
		}
		got := make(chan error, 1)
		go func() {
			l, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
		time.Sleep(100 * time.Millisecond)
		released := time.Now()
		if err := holder.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("round %d: waiter: %v", i, err)
		}
		if waited := time.Since(released); waited > 3*time.Second {
			t.Fatalf("round %d: waiter woke %v after the release (holder TTL 20s)", i, waited)
		}
	}
}

// An extension whose reply is slower than the lease's remaining time: the
// call is cut off at the lease's local expiry and answered ErrNotHeld, and
// the extension Redis granted anyway is undone, so the key is free long
// before the TTL that extension set.
func TestSlowExtensionOfAnExpiringLeaseIsUndone(t *testing.T) {
	t.Parallel()
	direct := lockenv.Redis(t)
	proxy, client := openThroughProxy(t, direct.Options().Addr)
	locker := lock.New(newBackend(t, client), lock.Config{})
	t.Cleanup(locker.Close)
	warmUp(t, locker)

	key := "lock:{" + lockenv.Name("") + "}:seat:1"
	l, err := locker.Acquire(context.Background(), key, lock.Options{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	proxy.AddToxic(lockenv.Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 600}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = l.Extend(ctx, 10*time.Second)
	proxy.RemoveToxic("slow")
	if !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Extend answered after the lease's expiry = %v, want ErrNotHeld", err)
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrLeaseLost {
		t.Errorf("lease cause = %v, want ErrLeaseLost", cause)
	}
	deadline := time.Now().Add(4 * time.Second)
	for direct.Exists(context.Background(), key).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatalf("key kept by the late extension (PTTL %v)", direct.PTTL(context.Background(), key).Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
