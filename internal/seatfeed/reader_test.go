package seatfeed_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// subscribeAll subscribes to n schedules of this test alone.
func subscribeAll(t *testing.T, f *seatfeed.Feed, n int) (schedules []int64, subs []*seatfeed.Subscription) {
	t.Helper()
	first := rand.Int64N(1 << 40)
	for i := range n {
		schedule := first + int64(i)
		sub, err := f.Subscribe(context.Background(), schedule, 16)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		schedules = append(schedules, schedule)
		subs = append(subs, sub)
	}
	return schedules, subs
}

// An instance follows every schedule it watches in one blocking read:
// watching many schedules costs neither a Redis connection nor a
// goroutine for each.
func TestManySchedulesShareOneConnection(t *testing.T) {
	t.Parallel()
	rdb := lockenv.Redis(t)
	f := seatfeed.New(rdb, seatfeed.Config{Block: 200 * time.Millisecond})
	t.Cleanup(f.Close)
	const watched = 40
	schedules, subs := subscribeAll(t, f, watched)
	for i, schedule := range schedules {
		publish(t, f, schedule, reservation.SeatReserved, i+1)
	}
	for i, sub := range subs {
		if got := receive(t, sub, 1); got[0].SeatID != i+1 {
			t.Fatalf("schedule %d: seat %d, want %d", schedules[i], got[0].SeatID, i+1)
		}
	}
	// One connection reads, the others served Head and the publishes.
	if conns := rdb.PoolStats().TotalConns; conns > 4 {
		t.Errorf("%d schedules watched through %d connections; want one reading them all, and a few for the rest", watched, conns)
	}
}

// A schedule watched while the reader waits in its blocking read gets
// its changes at once, not when that read ends (Block).
func TestScheduleWatchedDuringAReadIsFollowedAtOnce(t *testing.T) {
	t.Parallel()
	const block = 10 * time.Second
	f := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: block})
	t.Cleanup(f.Close)
	subscribeAll(t, f, 1)
	time.Sleep(300 * time.Millisecond) // the reader now waits on the first schedule
	schedules, subs := subscribeAll(t, f, 1)
	start := time.Now()
	publish(t, f, schedules[0], reservation.SeatReserved, 7)
	if got := receive(t, subs[0], 1); got[0].SeatID != 7 {
		t.Fatalf("seat %d, want 7", got[0].SeatID)
	}
	if waited := time.Since(start); waited > block/2 {
		t.Errorf("the change took %v to arrive; want far less than the read's %v", waited, block)
	}
}

// Close ends a read that waits, rather than waiting for Block.
func TestCloseEndsAWaitingRead(t *testing.T) {
	t.Parallel()
	const block = 10 * time.Second
	f := seatfeed.New(lockenv.Redis(t), seatfeed.Config{Block: block})
	_, subs := subscribeAll(t, f, 2)
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	f.Close()
	if took := time.Since(start); took > block/2 {
		t.Errorf("Close took %v; want far less than the read's %v", took, block)
	}
	for i, sub := range subs {
		select {
		case _, open := <-sub.C:
			if open {
				t.Errorf("subscription %d delivered after Close", i)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("subscription %d still open after Close", i)
		}
	}
}

// A Redis Cluster keeps each schedule's stream in a slot of its own,
// which one read cannot span: each schedule is read alone there.
func TestClusterFeedFollowsEverySchedule(t *testing.T) {
	t.Parallel()
	f := seatfeed.New(lockenv.RedisCluster(t), seatfeed.Config{Block: 200 * time.Millisecond})
	t.Cleanup(f.Close)
	schedules, subs := subscribeAll(t, f, 5)
	for i, schedule := range schedules {
		publish(t, f, schedule, reservation.SeatHeld, i+1)
	}
	for i, sub := range subs {
		if got := receive(t, sub, 1); got[0].SeatID != i+1 || got[0].Status != reservation.SeatHeld {
			t.Fatalf("schedule %d: %+v, want seat %d held", schedules[i], got[0], i+1)
		}
	}
}

// A Redis user whose ACL refuses CLIENT commands is read all the same:
// only the early end of a waiting read is lost.
func TestFeedWithoutClientCommands(t *testing.T) {
	t.Parallel()
	admin := lockenv.Redis(t)
	ctx := context.Background()
	user := lockenv.Name("feed_no_client")
	if err := admin.Do(ctx, "acl", "setuser", user, "on", ">secret", "~*", "&*", "+@all", "-client").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Do(context.Background(), "acl", "deluser", user).Err() })
	opts := admin.Options()
	opts.Username, opts.Password = user, "secret"
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.ClientID(ctx).Err(); err == nil {
		t.Fatal("CLIENT ID allowed; the test wants it refused")
	}
	f := seatfeed.New(rdb, seatfeed.Config{Block: 200 * time.Millisecond})
	t.Cleanup(f.Close)
	schedules, subs := subscribeAll(t, f, 3)
	for i, schedule := range schedules {
		publish(t, f, schedule, reservation.SeatReserved, i+1)
	}
	for i, sub := range subs {
		if got := receive(t, sub, 1); got[0].SeatID != i+1 {
			t.Fatalf("schedule %d: seat %d, want %d", schedules[i], got[0].SeatID, i+1)
		}
	}
}
