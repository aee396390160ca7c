package app_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
)

// A Redis primary dies holding a seat lock its replica never received, the
// replica is promoted and a second booker is granted the same seat on it:
// two holders at once. The fence and the UNIQUE constraint still give the
// seat exactly one reservation; the first holder, whose statement reaches
// PostgreSQL after the second's, is refused.
//
// Both instances reach Redis through one proxy, the address a failover
// re-points (a virtual IP, what Sentinel hands out). The replica replicates
// through a proxy of its own whose toxic drops the stream once the
// replica is in sync: the lock never reaches it. The first instance's
// statements reach PostgreSQL 4 s late, so it holds the lock while the
// primary dies, and its booking statement arrives after the second
// booker's.
func TestFaultRedisFailoverBeforeReplication(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	primary, replica := lockenv.StartRedis(t), lockenv.StartRedis(t)
	onPrimary, onReplica := plainRedis(t, primary.Addr), plainRedis(t, replica.Addr)
	replication := lockenv.NewProxy(t, primary.Addr)
	host, port, _ := net.SplitHostPort(replication.Addr())
	if err := onReplica.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	if err := onPrimary.Set(ctx, "replication-check", "in sync", 0).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(faultPatience)
	for onReplica.Get(ctx, "replication-check").Val() != "in sync" {
		if time.Now().After(deadline) {
			t.Fatal("the replica never caught up with the primary")
		}
		time.Sleep(20 * time.Millisecond)
	}
	replication.AddToxic(lockenv.Toxic{Name: "replication-stalled", Type: "timeout", Stream: "downstream",
		Attributes: map[string]any{"timeout": 0}})

	h := newHarnessWith(t, 0, faultTuning)
	cfg := h.cfg
	var redisProxy, pgProxy *lockenv.Proxy
	cfg.RedisURL, redisProxy = proxiedURL(t, "redis://"+primary.Addr)
	slow := cfg
	slow.DatabaseURL, pgProxy = proxiedURL(t, cfg.DatabaseURL)
	h.bases = append(h.bases, h.serve(slow), h.serve(cfg))
	const seats = 3
	schedule := h.createScheduleDirect(seats)
	// Warm up both instances: schedule cached, connections open.
	for base, seat := range []int{3, 2} {
		if resp := h.reserve(base, "carol", schedule, seat); resp.status != http.StatusOK {
			t.Fatalf("booking before the failover: %d %s", resp.status, resp.raw)
		}
	}

	pgProxy.AddToxic(lockenv.Toxic{Name: "slow-statements", Type: "latency", Stream: "upstream",
		Attributes: map[string]any{"latency": 4000}})
	firstHolder := make(chan response, 1)
	go func() { firstHolder <- h.reserve(0, "alice", schedule, 1) }()
	key := reservation.SeatLockKey(schedule, 1)
	for onPrimary.Exists(ctx, key).Val() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the first booking never locked the seat")
		}
		time.Sleep(2 * time.Millisecond)
	}

	primary.Kill()
	if n := onReplica.Exists(ctx, key).Val(); n != 0 {
		t.Fatal("the lock reached the replica: the scenario did not happen")
	}
	// Before the failover, Redis is gone for the instances.
	resp, first503 := timed(func() response { return h.reserve(1, "bob", schedule, 1) })
	expectUnavailable(t, resp)

	if err := onReplica.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	redisProxy.Retarget(replica.Addr)
	recovery := h.bookUntilOK(1, "bob", schedule, 1)

	// The first holder's statement is held up longer than a write under
	// a lock may take: it hears 503 (nothing it can be sure of), or, had
	// its statement come back in time, 409 for the fence its lock lost.
	stale := <-firstHolder
	switch {
	case stale.status == http.StatusServiceUnavailable && stale.code() == "unavailable":
	case stale.status == http.StatusConflict && (stale.code() == "seat_locked" || stale.code() == "seat_taken"):
	default:
		t.Errorf("the first holder, whose lock the failover lost: %d %s, want 503 unavailable or 409 seat_locked or seat_taken", stale.status, stale.raw)
	}
	pgProxy.RemoveToxic("slow-statements")
	var owner string
	var rows int
	err := h.pool.QueryRow(ctx, `SELECT count(*), max(user_id) FROM reservations
		WHERE schedule_id = $1 AND seat_id = 1 AND cancelled_at IS NULL`, schedule).Scan(&rows, &owner)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 1 || owner != "bob" {
		t.Errorf("seat 1: %d active reservations, owner %q; want exactly bob's", rows, owner)
	}
	unlocked := h.expectSettled(onReplica, schedule, seats)
	t.Logf("fault=redis-failover: the first holder (lock lost with the primary) got %d %s", stale.status, stale.code())
	logFault(t, "redis-failover", first503, recovery, unlocked)
}

// plainRedis is a client of one private redis-server, for the test's own
// commands.
func plainRedis(t *testing.T, addr string) *redis.Client {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis-server on %s: %v", addr, err)
	}
	return client
}
