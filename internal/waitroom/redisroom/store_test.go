package redisroom_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/waitroom"
	"github.com/seatlock/seatlock/internal/waitroom/redisroom"
)

// newQueue puts a queue with settings s on a schedule id of its own.
func newQueue(t *testing.T, s waitroom.Settings) (*redisroom.Store, int64) {
	t.Helper()
	store := redisroom.New(lockenv.Redis(t), redisroom.Config{Namespace: lockenv.Name("queue-test-") + "/"})
	id := rand.Int64N(1<<50) + 1
	if err := store.Put(context.Background(), id, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Delete(context.Background(), id) })
	return store, id
}

func join(t *testing.T, store *redisroom.Store, id int64, user string) string {
	t.Helper()
	ticket := fmt.Sprintf("%d-%032x", id, rand.Uint64())
	got, _, created, err := store.Join(context.Background(), id, user, ticket, rand.Float64())
	if err != nil || !created || got != ticket {
		t.Fatalf("join %s: %q %v %v", user, got, created, err)
	}
	return ticket
}

func place(t *testing.T, store *redisroom.Store, id int64, ticket string) waitroom.Place {
	t.Helper()
	snap, err := store.Places(context.Background(), id, ticket)
	if err != nil || len(snap.Places) != 1 {
		t.Fatalf("places: %v %v", snap, err)
	}
	return snap.Places[0]
}

// round runs a round of admission over the test's namespace (every queue
// due is run) and returns the queue's, when it was due.
func round(t *testing.T, store *redisroom.Store, id int64) (waitroom.Round, bool) {
	t.Helper()
	rounds, err := store.AdmitDue(context.Background(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rounds.Queues[id]
	return r, ok
}

// roundOf runs rounds until the queue was due, and returns its round.
func roundOf(t *testing.T, store *redisroom.Store, id int64) waitroom.Round {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if r, ok := round(t, store, id); ok {
			return r
		}
	}
	t.Fatalf("queue %d never due", id)
	return waitroom.Round{}
}

func TestExpiryFreesAPlace(t *testing.T) {
	ctx := context.Background()
	store, id := newQueue(t, waitroom.Settings{OpensAt: time.Now().Add(-time.Second), AdmitPerSecond: 1000, MaxActive: 1,
		AdmissionTTL: 300 * time.Millisecond})
	first, second := join(t, store, id, "first"), join(t, store, id, "second")
	time.Sleep(20 * time.Millisecond) // a few admissions' worth
	r := roundOf(t, store, id)
	if r.Admitted != 1 || r.Active != 1 || r.InLine != 1 {
		t.Fatalf("first round: %+v", r)
	}
	if p := place(t, store, id, first); p.State != waitroom.Admitted || p.Expires.IsZero() {
		t.Fatalf("first: %+v", p)
	}
	if p := place(t, store, id, second); p.State != waitroom.Waiting || p.Position != 1 {
		t.Fatalf("second: %+v", p)
	}
	// maxActive is full: the queue is due when the first admission ends,
	// not before.
	time.Sleep(20 * time.Millisecond)
	if r, due := round(t, store, id); due {
		t.Fatalf("due while maxActive is full: %+v", r)
	}
	time.Sleep(400 * time.Millisecond)
	r = roundOf(t, store, id)
	if r.Admitted != 1 || r.Active != 1 || r.AdmittedTotal != 2 {
		t.Fatalf("after the expiry: %+v", r)
	}
	if p := place(t, store, id, first); p.State != waitroom.Expired {
		t.Fatalf("first after its time: %+v", p)
	}
	if p := place(t, store, id, second); p.State != waitroom.Admitted {
		t.Fatalf("second after the first's time: %+v", p)
	}
	if ok, err := store.Admitted(ctx, id, first); ok || err != nil {
		t.Fatalf("an expired ticket is admitted: %v %v", ok, err)
	}
}

func TestLeavingGivesThePlaceToTheNext(t *testing.T) {
	ctx := context.Background()
	store, id := newQueue(t, waitroom.Settings{OpensAt: time.Now().Add(-time.Second), AdmitPerSecond: 1000, MaxActive: 1,
		AdmissionTTL: time.Minute})
	first, second, third := join(t, store, id, "first"), join(t, store, id, "second"), join(t, store, id, "third")
	time.Sleep(20 * time.Millisecond)
	if r := roundOf(t, store, id); r.Admitted != 1 {
		t.Fatalf("round: %+v", r)
	}
	// The second leaves the line: the third moves up.
	if _, err := store.Leave(ctx, id, second, "second"); err != nil {
		t.Fatal(err)
	}
	if p := place(t, store, id, third); p.Position != 1 {
		t.Fatalf("third: %+v", p)
	}
	if _, err := store.Leave(ctx, id, first, "someone else"); err != waitroom.ErrTicketNotFound {
		t.Fatalf("leave another's ticket: %v", err)
	}
	// The first gives up its admission: the third takes it.
	if snap, err := store.Leave(ctx, id, first, "first"); err != nil || snap.Places[0].State != waitroom.Left {
		t.Fatalf("leave: %+v %v", snap, err)
	}
	// Leaving marked the queue due: the freed place is taken at once.
	if r, due := round(t, store, id); !due || r.Admitted != 1 {
		t.Fatalf("round after leaving: %+v (due: %v)", r, due)
	}
	if p := place(t, store, id, third); p.State != waitroom.Admitted {
		t.Fatalf("third: %+v", p)
	}
	if p := place(t, store, id, second); p.State != waitroom.Left {
		t.Fatalf("second: %+v", p)
	}
}

// TestAdmissionIsPacedOverEveryCaller: four callers asking as fast as
// they like admit at the queue's rate, not four times it.
func TestAdmissionIsPacedOverEveryCaller(t *testing.T) {
	ctx := context.Background()
	const rate = 200
	store, id := newQueue(t, waitroom.Settings{OpensAt: time.Now().Add(-time.Second), AdmitPerSecond: rate, AdmissionTTL: time.Hour})
	for i := range 2000 {
		join(t, store, id, fmt.Sprint("user", i))
	}
	start := roundOf(t, store, id)
	began := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for time.Since(began) < 2*time.Second {
				if _, err := store.AdmitDue(ctx, time.Millisecond); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
			}
		})
	}
	wg.Wait()
	end := roundOf(t, store, id)
	elapsed := time.Since(began)
	admitted := float64(end.AdmittedTotal - start.AdmittedTotal)
	want := rate * elapsed.Seconds()
	if admitted < 0.9*want || admitted > 1.1*want {
		t.Fatalf("admitted %.0f in %s: want %.0f ± 10%%", admitted, elapsed, want)
	}
}

func TestOnePlacePerUser(t *testing.T) {
	ctx := context.Background()
	store, id := newQueue(t, waitroom.Settings{OpensAt: time.Now().Add(-time.Second), AdmitPerSecond: 1, AdmissionTTL: time.Hour})
	tickets := make(chan string, 100)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			user := fmt.Sprint("user", i%10)
			got, _, _, err := store.Join(ctx, id, user, fmt.Sprintf("%d-%032x", id, rand.Uint64()), rand.Float64())
			if err != nil {
				t.Error(err)
			}
			tickets <- user + " " + got
		})
	}
	wg.Wait()
	close(tickets)
	byUser := map[string]string{}
	distinct := map[string]bool{}
	for line := range tickets {
		var user, ticket string
		_, _ = fmt.Sscan(line, &user, &ticket)
		if prev, ok := byUser[user]; ok && prev != ticket {
			t.Fatalf("%s has two tickets: %s and %s", user, prev, ticket)
		}
		byUser[user] = ticket
		distinct[ticket] = true
	}
	if len(distinct) != 10 {
		t.Fatalf("%d tickets for 10 users", len(distinct))
	}
	_, counts, err := store.Counts(ctx, id)
	if err != nil || counts.Waiting != 10 {
		t.Fatalf("counts: %+v %v", counts, err)
	}
	if queued, err := store.Queued(ctx, id); !queued || err != nil {
		t.Fatalf("queued: %v %v", queued, err)
	}
}

func TestNoQueue(t *testing.T) {
	ctx := context.Background()
	store := redisroom.New(lockenv.Redis(t), redisroom.Config{Namespace: lockenv.Name("queue-test-") + "/"})
	id := rand.Int64N(1<<50) + 1
	if _, _, _, err := store.Join(ctx, id, "u", fmt.Sprintf("%d-%032x", id, 1), 0.5); err != waitroom.ErrQueueNotFound {
		t.Fatalf("join: %v", err)
	}
	if r, due := round(t, store, id); due {
		t.Fatalf("a round ran a queue that is not: %+v", r)
	}
	if _, _, err := store.Counts(ctx, id); err != waitroom.ErrQueueNotFound {
		t.Fatalf("counts: %v", err)
	}
	if queued, err := store.Queued(ctx, id); queued || err != nil {
		t.Fatalf("queued: %v %v", queued, err)
	}
	if err := store.Delete(ctx, id); err != waitroom.ErrQueueNotFound {
		t.Fatalf("delete: %v", err)
	}
}
