package seatfeed_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/redisconn"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/testenv"
)

// feedBehindSentinel is a Feed with cfg on a Redis primary, its replica
// and three Sentinels of the test's own, through a Sentinel URL.
func feedBehindSentinel(t *testing.T, cfg seatfeed.Config) (*testenv.SentinelSetup, redis.UniversalClient, *seatfeed.Feed) {
	t.Helper()
	setup := testenv.StartSentinel(t)
	rdb, err := redisconn.Open(setup.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	f := seatfeed.New(rdb, cfg)
	t.Cleanup(f.Close)
	return setup, rdb, f
}

// An append that Append reported done survives a Sentinel failover: the
// relay deletes its outbox rows on that word, so a change the old master
// acknowledged and never passed to its replica would be lost for every
// watcher. Writers append as fast as they can while the Sentinels promote
// the replica (SENTINEL FAILOVER: the old master takes writes until it is
// told it is a replica); afterwards every position acknowledged is on the
// new master's streams. Without waiting for the replica, 28,808 of
// 72,327 were missing in one run.
func TestAppendAcknowledgedSurvivesAFailover(t *testing.T) {
	t.Parallel()
	setup, rdb, f := feedBehindSentinel(t, seatfeed.Config{Replicas: 1})
	ctx := context.Background()
	before, err := setup.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}

	const writers = 8
	stop := make(chan struct{})
	acked := make([][]int64, writers)
	refused := make([]int, writers)
	var ackedSoFar atomic.Int64
	var wg sync.WaitGroup
	stopWriters := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriters()
	// awaitAcks waits for n appends acknowledged in all: the phases are
	// counted in appends, not in time, so that a busy machine's slow
	// writers still append on both sides of the failover.
	awaitAcks := func(n int64, phase string) {
		deadline := time.Now().Add(30 * time.Second)
		for ackedSoFar.Load() < n {
			if time.Now().After(deadline) {
				got := ackedSoFar.Load()
				stopWriters()
				t.Fatalf("%s: %d appends acknowledged in all after 30 s, want %d", phase, got, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for w := range writers {
		wg.Go(func() {
			schedule := int64(9_000_000 + w)
			for pos := int64(1); ; pos++ {
				select {
				case <-stop:
					return
				default:
				}
				batch := []seatfeed.ScheduleChanges{{ScheduleID: schedule,
					Changes: []seatfeed.Change{change(pos, int(pos), reservation.SeatReserved)}}}
				callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
				_, err := f.Append(callCtx, batch)
				cancel()
				switch {
				case err == nil:
					acked[w] = append(acked[w], pos)
					ackedSoFar.Add(1)
				case errors.Is(err, reservation.ErrUnavailable):
					refused[w]++
					time.Sleep(5 * time.Millisecond)
				default:
					t.Errorf("writer %d: Append: %v", w, err)
					return
				}
			}
		})
	}
	const perPhase = 500
	awaitAcks(perPhase, "before the failover")
	sentinel := redis.NewSentinelClient(&redis.Options{Addr: setup.Sentinels[0].Addr})
	defer func() { _ = sentinel.Close() }()
	if err := sentinel.Failover(ctx, testenv.SentinelMaster).Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		now, err := setup.MasterAddr(ctx)
		if err == nil && now != before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Sentinels still name %s 30 s after the failover", before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Appends go on for a while on the new master.
	awaitAcks(ackedSoFar.Load()+perPhase, "after the failover")
	stopWriters()

	total, lost, failed := 0, 0, 0
	for w := range writers {
		onStream := map[string]bool{}
		schedule := int64(9_000_000 + w)
		entries, err := rdb.XRange(ctx, seatfeed.StreamKey(schedule), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			onStream[e.Values["pos"].(string)] = true
		}
		for _, pos := range acked[w] {
			if !onStream[strconv.FormatInt(pos, 10)] {
				lost++
			}
		}
		total += len(acked[w])
		failed += refused[w]
	}
	t.Logf("%d appends acknowledged, %d refused as unavailable, %d acknowledged and lost", total, failed, lost)
	if lost > 0 {
		t.Errorf("%d appends acknowledged before the failover are not on the new master", lost)
	}
}

// An append waits for its replica: it loads the script again when the
// master has forgotten it; while no replica takes it, it is refused as
// unavailable, not reported done, for ReplicaGrace; then the master's word
// is taken, so that a missing replica does not stop the live map; and a
// change appended again adds nothing twice.
func TestAppendWaitsForItsReplica(t *testing.T) {
	t.Parallel()
	const grace = 1500 * time.Millisecond
	setup, rdb, f := feedBehindSentinel(t, seatfeed.Config{Replicas: 1, ReplicaTimeout: 200 * time.Millisecond, ReplicaGrace: grace})
	ctx := context.Background()
	const schedule = 77
	appendSeat := func(pos int64) (int, error) {
		return f.Append(ctx, []seatfeed.ScheduleChanges{{ScheduleID: schedule,
			Changes: []seatfeed.Change{change(pos, int(pos), reservation.SeatReserved)}}})
	}

	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if added, err := appendSeat(1); err != nil || added != 1 {
		t.Fatalf("after SCRIPT FLUSH: Append = %d, %v; want 1 added", added, err)
	}

	setup.Servers[1].Kill() // the replica
	lost := time.Now()
	added, err := appendSeat(2)
	if !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("with no replica: Append = %d, %v; want ErrUnavailable", added, err)
	}
	if waited := time.Since(lost); waited < 150*time.Millisecond {
		t.Errorf("refused after %s, before its 200ms wait for the replica", waited)
	}
	if got := streamEntries(t, rdb, schedule); len(got) != 2 {
		t.Errorf("stream after the refused append: %v; want seats 1 and 2 (the master has it)", got)
	}

	// The relay tries again until the grace is over; the entry is there
	// once, and the change after it goes in on the master's word.
	refusals := 0
	for {
		_, err := appendSeat(2)
		if err == nil {
			break
		}
		if !errors.Is(err, reservation.ErrUnavailable) {
			t.Fatal(err)
		}
		refusals++
		time.Sleep(50 * time.Millisecond)
	}
	if since := time.Since(lost); since < grace {
		t.Errorf("appends taken %s after the replica died, within the %s grace", since, grace)
	}
	if refusals == 0 {
		t.Error("no refusal before the grace was over")
	}
	if added, err := appendSeat(3); err != nil || added != 1 {
		t.Errorf("past the grace: Append = %d, %v; want 1 added", added, err)
	}
	if got := streamEntries(t, rdb, schedule); len(got) != 3 {
		t.Errorf("stream: %v; want seats 1, 2 and 3 once each", got)
	}
}
