package redisroom_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
	"github.com/seatlock/seatlock/internal/waitroom/redisroom"
)

// counting counts the commands sent through a client (a pipeline counts
// each of its commands), and fails the admission scripts while failAdmit
// is set.
type counting struct {
	commands  atomic.Int64
	pipelines atomic.Int64
	failAdmit atomic.Bool
}

func (c *counting) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counting) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (c *counting) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.commands.Add(int64(len(cmds)))
		c.pipelines.Add(1)
		if c.failAdmit.Load() {
			err := errors.New("the round's instance died")
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		return next(ctx, cmds)
	}
}

// instance is one service instance's store on a namespace shared with
// the others, counting its commands.
func instance(t *testing.T, namespace string) (*redisroom.Store, *counting) {
	t.Helper()
	opts, err := redis.ParseURL(lockenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	c := &counting{}
	client.AddHook(c)
	return redisroom.New(client, redisroom.Config{Namespace: namespace}), c
}

func putQueues(t *testing.T, store *redisroom.Store, n int, s waitroom.Settings) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = rand.Int64N(1<<50) + 1
		if err := store.Put(context.Background(), ids[i], s); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, id := range ids {
			_ = store.Delete(context.Background(), id)
		}
	})
	return ids
}

// TestAnIdleQueueCostsNoCall: 300 open queues with nobody in them, once
// their first rounds settled them, cost a round one call, the same as no
// queue at all.
func TestAnIdleQueueCostsNoCall(t *testing.T) {
	store, calls := instance(t, lockenv.Name("queue-test-")+"/")
	ids := putQueues(t, store, 300, waitroom.Settings{OpensAt: time.Now().Add(-time.Second), AdmitPerSecond: 100, AdmissionTTL: time.Minute})
	rounds, err := store.AdmitDue(context.Background(), time.Millisecond)
	if err != nil || len(rounds.Queues) != len(ids) {
		t.Fatalf("the first round ran %d of the %d new queues: %v", len(rounds.Queues), len(ids), err)
	}
	before := calls.commands.Load()
	const n = 50
	for range n {
		rounds, err := store.AdmitDue(context.Background(), time.Millisecond)
		if err != nil || len(rounds.Queues) != 0 {
			t.Fatalf("a round ran %d idle queues: %v", len(rounds.Queues), err)
		}
	}
	if got := calls.commands.Load() - before; got != n {
		t.Fatalf("%d rounds over %d idle queues made %d calls, want one a round", n, len(ids), got)
	}
	if err := store.Delete(context.Background(), ids[0]); err != nil {
		t.Fatalf("deleting an idle queue: %v", err)
	}
}

// TestAJoinWakesAnIdleQueue: the first buyer of an idle queue is admitted
// by the next round; the time nobody waited paid for no one after them.
func TestAJoinWakesAnIdleQueue(t *testing.T) {
	store, _ := instance(t, lockenv.Name("queue-test-")+"/")
	id := putQueues(t, store, 1, waitroom.Settings{OpensAt: time.Now().Add(-time.Minute), AdmitPerSecond: 2, AdmissionTTL: time.Minute})[0]
	roundOf(t, store, id)
	time.Sleep(1500 * time.Millisecond) // idle: worth three admissions, were it saved
	if r, due := round(t, store, id); due {
		t.Fatalf("an idle queue ran: %+v", r)
	}
	first, second, third := join(t, store, id, "first"), join(t, store, id, "second"), join(t, store, id, "third")
	r, due := round(t, store, id)
	if !due || r.Admitted != 1 || r.InLine != 2 {
		t.Fatalf("the round after the joins: %+v (due: %v), want the first admitted and two in line", r, due)
	}
	for ticket, want := range map[string]waitroom.State{first: waitroom.Admitted, second: waitroom.Waiting, third: waitroom.Waiting} {
		if p := place(t, store, id, ticket); p.State != want {
			t.Fatalf("%s: %+v, want %s", ticket, p, want)
		}
	}
}

// TestARoundThatDiesLosesNoAdmission: a round whose instance dies after
// claiming its queues leaves them to the next claim, a pause shorter than
// the second's worth a queue may catch up: over the whole run the rate
// holds, three deaths or not.
func TestARoundThatDiesLosesNoAdmission(t *testing.T) {
	namespace := lockenv.Name("queue-test-") + "/"
	dying, hooks := instance(t, namespace)
	survivor, _ := instance(t, namespace)
	const rate = 50
	id := putQueues(t, survivor, 1, waitroom.Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: rate, AdmissionTTL: time.Hour})[0]
	for i := range 400 {
		join(t, survivor, id, fmt.Sprint("buyer", i))
	}
	start := roundOf(t, survivor, id) // the second's worth an idle queue pays at once
	began := time.Now()
	deaths := 0
	for time.Since(began) < 3500*time.Millisecond {
		if time.Since(began) > time.Duration(deaths)*time.Second+500*time.Millisecond {
			// The dying instance claims the queue as soon as it is due,
			// and dies before admitting.
			hooks.failAdmit.Store(true)
			for {
				if _, err := dying.AdmitDue(context.Background(), time.Millisecond); err != nil {
					break
				}
				time.Sleep(time.Millisecond)
			}
			hooks.failAdmit.Store(false)
			deaths++
		}
		if _, err := survivor.AdmitDue(context.Background(), time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(redisroom.ClaimFor)
	end := roundOf(t, survivor, id)
	elapsed := time.Since(began)
	admitted := float64(end.AdmittedTotal - start.AdmittedTotal)
	want := rate * elapsed.Seconds()
	if deaths != 3 || admitted < 0.9*want || admitted > 1.1*want {
		t.Fatalf("admitted %.0f in %s with %d rounds dying: want %.0f ± 10%%", admitted, elapsed, deaths, want)
	}
}

// TestInstancesShareTheRounds: three instances running rounds over twelve
// queues of different rates admit each queue at its rate and in its
// order, and run each queue's admission no more often than one instance
// would.
func TestInstancesShareTheRounds(t *testing.T) {
	namespace := lockenv.Name("queue-test-") + "/"
	const instances, queues, every = 3, 12, 100 * time.Millisecond
	ctx := context.Background()
	stores := make([]*redisroom.Store, instances)
	for i := range stores {
		stores[i], _ = instance(t, namespace)
	}
	rates := map[int64]int{}
	joined := map[int64][]string{}
	for q := range queues {
		rate := 5 + 8*q
		id := putQueues(t, stores[0], 1, waitroom.Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: rate, AdmissionTTL: time.Hour})[0]
		rates[id] = rate
		for b := range 6 * rate {
			joined[id] = append(joined[id], join(t, stores[q%instances], id, fmt.Sprint("buyer", b)))
		}
	}
	// The first round of each queue admits the second's worth an idle
	// queue pays at once; the rate is measured after it.
	if rounds, err := stores[0].AdmitDue(ctx, every); err != nil || len(rounds.Queues) != queues {
		t.Fatalf("the first round ran %d queues: %v", len(rounds.Queues), err)
	}
	admittedNow := func(id int64) int64 {
		_, c, err := stores[2].Counts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.Admitted
	}
	start := map[int64]int64{}
	for id := range rates {
		start[id] = admittedNow(id)
	}
	var scriptRuns atomic.Int64
	run, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	began := time.Now()
	var wg sync.WaitGroup
	for _, store := range stores {
		wg.Go(func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-run.Done():
					return
				case <-tick.C:
				}
				rounds, err := store.AdmitDue(run, every)
				if err != nil && run.Err() == nil {
					t.Error(err)
				}
				scriptRuns.Add(int64(len(rounds.Queues)))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	for id, rate := range rates {
		admitted := float64(admittedNow(id) - start[id])
		want := float64(rate) * elapsed.Seconds()
		if admitted < 0.9*want-2 || admitted > 1.1*want+2 {
			t.Errorf("queue at %d/s admitted %.0f in %s: want %.0f ± 10%%", rate, admitted, elapsed, want)
		}
		// Admission order is the order of joining: the admitted are the
		// first of it, the rest wait.
		snap, err := stores[1].Places(ctx, id, joined[id]...)
		if err != nil {
			t.Fatal(err)
		}
		states := make([]waitroom.State, len(snap.Places))
		for i, p := range snap.Places {
			states[i] = p.State
		}
		cut := slices.Index(states, waitroom.Waiting)
		admittedFirst := !slices.ContainsFunc(states[:max(cut, 0)], func(s waitroom.State) bool { return s != waitroom.Admitted })
		if cut < 1 || !admittedFirst || slices.ContainsFunc(states[cut:], func(s waitroom.State) bool { return s != waitroom.Waiting }) {
			t.Errorf("queue at %d/s: admitted out of order: %v", rate, states)
		}
	}
	// One instance alone would run each queue once a round at most.
	rounds := elapsed.Seconds() / every.Seconds()
	if limit := 1.2 * rounds * queues; float64(scriptRuns.Load()) > limit {
		t.Errorf("%d instances ran %d admissions of %d queues in %.0f rounds' time, want ≤ %.0f", instances, scriptRuns.Load(), queues, rounds, limit)
	}
}

// TestTotalsFollowTheQueues: every round's totals are the sums of the
// queues' counts, and a deleted queue's leave them.
func TestTotalsFollowTheQueues(t *testing.T) {
	store, _ := instance(t, lockenv.Name("queue-test-")+"/")
	ids := putQueues(t, store, 3, waitroom.Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: 1, AdmissionTTL: time.Hour})
	for i, id := range ids {
		for b := range 3 + i {
			join(t, store, id, fmt.Sprint("buyer", b))
		}
	}
	// Each queue admits one at once (it was idle), the rest wait.
	roundOf(t, store, ids[0])
	rounds, err := store.AdmitDue(context.Background(), time.Millisecond)
	if err != nil || rounds.InLine != 2+3+4 || rounds.Active != 3 {
		t.Fatalf("totals: %d in line, %d active, want 9 and 3 (%v)", rounds.InLine, rounds.Active, err)
	}
	if err := store.Delete(context.Background(), ids[2]); err != nil {
		t.Fatal(err)
	}
	rounds, err = store.AdmitDue(context.Background(), time.Millisecond)
	if err != nil || rounds.InLine != 2+3 || rounds.Active != 2 {
		t.Fatalf("totals after a delete: %d in line, %d active, want 5 and 2 (%v)", rounds.InLine, rounds.Active, err)
	}
}

// TestMarkWaitingFindsALostMark: a join whose mark was lost (its instance
// killed between the join and the mark) is admitted once the queues with
// buyers in line are marked; an idle queue is not marked.
func TestMarkWaitingFindsALostMark(t *testing.T) {
	namespace := lockenv.Name("queue-test-") + "/"
	store, _ := instance(t, namespace)
	ids := putQueues(t, store, 2, waitroom.Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: 10, AdmissionTTL: time.Hour})
	id, idle := ids[0], ids[1]
	roundOf(t, store, id)
	time.Sleep(200 * time.Millisecond) // past the step of the rate
	ticket := join(t, store, id, "buyer")
	if err := lockenv.Redis(t).ZRem(context.Background(), namespace+"queue:{due}:at", id).Err(); err != nil {
		t.Fatal(err)
	}
	if r, due := round(t, store, id); due {
		t.Fatalf("ran without its mark: %+v", r)
	}
	if err := store.MarkWaiting(context.Background()); err != nil {
		t.Fatal(err)
	}
	rounds, err := store.AdmitDue(context.Background(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r, due := rounds.Queues[id]; !due || r.Admitted != 1 {
		t.Fatalf("after MarkWaiting: %+v (due: %v)", r, due)
	}
	if r, due := rounds.Queues[idle]; due {
		t.Fatalf("MarkWaiting marked an idle queue: %+v", r)
	}
	if p := place(t, store, id, ticket); p.State != waitroom.Admitted {
		t.Fatalf("the buyer: %+v", p)
	}
}

// TestAdmitDueWithoutRedis: an unreachable store is reported as such.
func TestAdmitDueWithoutRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	store := redisroom.New(redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1}), redisroom.Config{})
	if _, err := store.AdmitDue(context.Background(), time.Millisecond); !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("AdmitDue without Redis: %v", err)
	}
	if err := store.MarkWaiting(context.Background()); !errors.Is(err, reservation.ErrUnavailable) {
		t.Fatalf("MarkWaiting without Redis: %v", err)
	}
}

// TestScriptsLoadedAgain: after Redis lost its scripts (a restart, a
// failover to a replica that never ran them), a round and a read of the
// places load them again and go on.
func TestScriptsLoadedAgain(t *testing.T) {
	store, _ := instance(t, lockenv.Name("queue-test-")+"/")
	id := putQueues(t, store, 1, waitroom.Settings{OpensAt: time.Now().Add(-time.Hour), AdmitPerSecond: 10, AdmissionTTL: time.Hour})[0]
	ticket := join(t, store, id, "buyer")
	if err := lockenv.Redis(t).ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if r := roundOf(t, store, id); r.Admitted != 1 {
		t.Fatalf("the round after the scripts were lost: %+v", r)
	}
	if err := lockenv.Redis(t).ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	snaps, err := store.PlacesOf(context.Background(), map[int64][]string{id: {ticket}})
	if err != nil || len(snaps[id].Places) != 1 || snaps[id].Places[0].State != waitroom.Admitted {
		t.Fatalf("places after the scripts were lost: %+v %v", snaps, err)
	}
}
