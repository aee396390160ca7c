// Package ratelimit admits requests per key (a user, a client address) at
// a rate shared by every instance, without a Redis call for a client well
// within its limit.
//
// Each instance admits a key's requests locally up to its share of the
// limit: the rate and the burst divided by the number of live instances,
// which the instances learn from a registry in Redis (each refreshes its
// entry every second). A client whose requests spread over the instances,
// or stay well below the share of the one they reach, is limited with no
// Redis call at all.
//
// A request past the local share (a client near its limit, or one whose
// requests all reach this instance) asks Redis: one script call that
// charges the shared budget (a GCRA, as github.com/go-redis/redis_rate
// keeps it, whose script cannot also take the places admitted locally in
// the same call) with what this instance admitted locally since it last
// asked, then takes this request's place. A refusal is remembered until
// Redis said the next place comes. Every second an instance also charges
// the budget with the local admissions of the keys that used more than
// half their share in that second, so that a client spread over the
// instances is refused as soon as the sum passes its limit.
//
// The price in precision: over any time t, a client is admitted at most
// its burst plus its limit over t, plus what instances admitted on their
// own and never charged (a key that used less than half an instance's
// share in a second is not charged for it: less than half the limit a
// second in all, and only when its requests are spread unevenly). A
// client that owes the budget what instances admitted on their own is
// refused until it has paid, for at most two bursts' time.
package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// SyncInterval is how often an instance refreshes its entry in the
// registry, learns how many instances there are, and charges the shared
// budgets with the local admissions of the keys near their limit.
const SyncInterval = time.Second

// instanceTTL is how long an instance that stopped refreshing its entry
// (killed, cut off) still counts.
const instanceTTL = 3 * SyncInterval

// idleTTL is how long a key's local state is kept after its last request.
const idleTTL = 10 * time.Second

//go:embed gcra.lua
var gcraSource string

var gcra = redis.NewScript(gcraSource)

// Limiter admits PerSecond requests a second per key, with bursts of as
// many. Close it.
type Limiter struct {
	client    redis.UniversalClient
	prefix    string
	registry  string
	instance  string
	perSecond int

	instances atomic.Int64 // live instances, this one included

	mu      sync.Mutex
	clients map[string]*client

	// closing ends when Close is called: it stops the periodic sync and
	// cancels one in flight, which waits on Redis otherwise.
	closing       context.Context
	cancelClosing context.CancelFunc
	done          chan struct{}
}

// client is one key's state on this instance.
type client struct {
	// tat is the local GCRA's theoretical arrival time: the local share
	// is spent while tat - now stays within the local burst.
	tat time.Time
	// unreported counts the places admitted locally that the shared
	// budget has not been charged with.
	unreported int
	// refusedUntil is when Redis said the next place comes.
	refusedUntil time.Time
	lastSeen     time.Time
}

// New returns a limiter named name (its keys are apart from other
// limiters') on rdb, registered as one more instance.
func New(rdb redis.UniversalClient, name string, perSecond int) *Limiter {
	prefix := "seatlock:" + name + ":"
	l := &Limiter{
		client:    rdb,
		prefix:    prefix,
		registry:  prefix + "instances",
		instance:  strconv.FormatUint(rand.Uint64(), 36),
		perSecond: max(1, perSecond),
		clients:   map[string]*client{},
		done:      make(chan struct{}),
	}
	l.closing, l.cancelClosing = context.WithCancel(context.Background())
	l.instances.Store(1)
	ctx, cancel := context.WithTimeout(context.Background(), SyncInterval)
	_ = l.Sync(ctx) // best effort: until a sync succeeds, this instance counts alone
	cancel()
	go l.syncEvery(SyncInterval)
	return l
}

// Instances is how many live instances share the limit, as last learned.
func (l *Limiter) Instances() int { return int(l.instances.Load()) }

// Allow takes one request's place for key. When it is refused, retryAfter
// is when the next one will be admitted. An error means Redis could not
// say; the caller decides whether to admit.
func (l *Limiter) Allow(ctx context.Context, key string) (allowed bool, retryAfter time.Duration, err error) {
	now := time.Now()
	n := l.instances.Load()
	// The local share: perSecond/n a second, bursts of as many.
	interval := time.Duration(int64(time.Second) * n / int64(l.perSecond))
	tolerance := interval * time.Duration(max(1, int64(l.perSecond)/n))

	l.mu.Lock()
	c := l.clients[key]
	if c == nil {
		c = &client{}
		l.clients[key] = c
	}
	c.lastSeen = now
	if now.Before(c.refusedUntil) {
		wait := c.refusedUntil.Sub(now)
		l.mu.Unlock()
		return false, wait, nil
	}
	tat := c.tat
	if tat.Before(now) {
		tat = now
	}
	if next := tat.Add(interval); next.Sub(now) <= tolerance {
		c.tat = next
		c.unreported++
		l.mu.Unlock()
		return true, 0, nil
	}
	charge := c.unreported
	c.unreported = 0
	l.mu.Unlock()

	allowed, retryAfter, err = l.ask(ctx, key, charge)
	if err != nil {
		l.mu.Lock()
		c.unreported += charge
		l.mu.Unlock()
		return false, 0, err
	}
	if !allowed {
		l.mu.Lock()
		c.refusedUntil = now.Add(retryAfter)
		l.mu.Unlock()
	}
	return allowed, retryAfter, nil
}

// ask charges key's shared budget with charge places admitted locally,
// then takes one place.
func (l *Limiter) ask(ctx context.Context, key string, charge int) (bool, time.Duration, error) {
	res, err := gcra.Run(ctx, l.client, []string{l.prefix + key}, l.scriptArgs(charge, 1)...).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: %w", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("ratelimit: unexpected reply %v", res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

// scriptArgs are gcra.lua's arguments: the emission interval in
// microseconds, the burst, the places to charge, the places to take.
func (l *Limiter) scriptArgs(charge, take int) []any {
	return []any{1e6 / float64(l.perSecond), l.perSecond, charge, take}
}

// Sync refreshes this instance's entry in the registry, learns how many
// instances there are, charges the shared budgets with the local
// admissions of the keys near their limit, and forgets idle keys. The
// limiter does it every SyncInterval by itself.
func (l *Limiter) Sync(ctx context.Context) error {
	now := time.Now()
	charges := l.takeCharges(now)
	pipe := l.client.Pipeline()
	pipe.ZAdd(ctx, l.registry, redis.Z{Score: float64(now.UnixMilli()), Member: l.instance})
	pipe.ZRemRangeByScore(ctx, l.registry, "-inf", strconv.FormatInt(now.Add(-instanceTTL).UnixMilli(), 10))
	count := pipe.ZCard(ctx, l.registry)
	pipe.PExpire(ctx, l.registry, 10*instanceTTL)
	cmds := make(map[string]*redis.Cmd, len(charges))
	for key, charge := range charges {
		cmds[key] = gcra.EvalSha(ctx, pipe, []string{l.prefix + key}, l.scriptArgs(charge, 0)...)
	}
	_, err := pipe.Exec(ctx)
	if n, cerr := count.Result(); cerr == nil && n > 0 {
		l.instances.Store(n)
	}
	// Charges that did not reach Redis (a Redis without the script
	// loaded yet, an outage) go back, for the next sync or request.
	noScript := false
	l.mu.Lock()
	for key, cmd := range cmds {
		if cerr := cmd.Err(); cerr != nil {
			noScript = noScript || redis.HasErrorPrefix(cerr, "NOSCRIPT")
			if c := l.clients[key]; c != nil {
				c.unreported += charges[key]
			}
		}
	}
	l.mu.Unlock()
	if noScript {
		_ = gcra.Load(ctx, l.client).Err()
	}
	if err != nil {
		return fmt.Errorf("ratelimit: sync: %w", err)
	}
	return nil
}

// takeCharges returns the unreported local admissions of the keys that
// used more than half their share since the last sync, and resets every
// key's count (a key well within its share is not charged: it cannot
// bring a client past its limit by much); it forgets idle keys.
func (l *Limiter) takeCharges(now time.Time) map[string]int {
	n := l.instances.Load()
	near := max(1, int(float64(l.perSecond)*SyncInterval.Seconds()/float64(n)/2))
	charges := map[string]int{}
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, c := range l.clients {
		if c.unreported >= near {
			charges[key] = c.unreported
		}
		c.unreported = 0
		if now.Sub(c.lastSeen) > idleTTL && !now.Before(c.refusedUntil) {
			delete(l.clients, key)
		}
	}
	return charges
}

func (l *Limiter) syncEvery(d time.Duration) {
	defer close(l.done)
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-l.closing.Done():
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(l.closing, d)
			_ = l.Sync(ctx) // an outage is seen by the requests that ask Redis
			cancel()
		}
	}
}

// Close stops the periodic sync (cancelling one in flight) and leaves the
// registry, so the other instances take over this one's share at their
// next sync.
func (l *Limiter) Close() error {
	l.cancelClosing()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), SyncInterval)
	defer cancel()
	return l.client.ZRem(ctx, l.registry, l.instance).Err()
}
