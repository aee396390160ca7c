package batch_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/batch"
)

// item is one call: its value, and a channel its batch answers on.
type item struct {
	value int
	key   int // items with the same non-zero key must be kept apart
	done  chan int
}

func newItem(v int) *item { return &item{value: v, done: make(chan int, 1)} }

// recorder is a send function that records each batch and can hold the
// batches back until released.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	hold    chan struct{} // nil: never held
	started chan struct{} // receives once per batch, before it is held
}

func (r *recorder) send(b []*item) {
	values := make([]int, len(b))
	for i, it := range b {
		values[i] = it.value
	}
	r.mu.Lock()
	r.batches = append(r.batches, values)
	hold := r.hold
	r.mu.Unlock()
	if r.started != nil {
		r.started <- struct{}{}
	}
	if hold != nil {
		<-hold
	}
	for _, it := range b {
		it.done <- it.value
	}
}

func (r *recorder) recorded() [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// waitPending waits until q holds n items; a busy machine may be slow to
// run the goroutines that add them.
func waitPending(t *testing.T, q *batch.Queue[*item], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for q.Pending() != n {
		if time.Now().After(deadline) {
			t.Fatalf("pending = %d, want %d", q.Pending(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// An item that finds a lane free is sent alone, before Add returns: an
// idle queue adds no wait.
func TestIdleQueueSendsAtOnceAlone(t *testing.T) {
	r := &recorder{}
	q := batch.NewQueue(2, 8, r.send)
	for v := 1; v <= 3; v++ {
		it := newItem(v)
		q.Add(it)
		select {
		case got := <-it.done:
			if got != v {
				t.Fatalf("item %d answered %d", v, got)
			}
		default:
			t.Fatalf("item %d not answered when Add returned", v)
		}
	}
	if got, want := r.recorded(), [][]int{{1}, {2}, {3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v (each alone)", got, want)
	}
}

// Items that arrive while every lane is busy go together in the next
// batch, at most max of them, in arrival order.
func TestBusyQueueGathersItemsUpToMax(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{}, 100)}
	q := batch.NewQueue(1, 4, r.send)
	first := newItem(0)
	go q.Add(first)
	<-r.started // the one lane is busy
	var items []*item
	for v := 1; v <= 6; v++ {
		it := newItem(v)
		items = append(items, it)
		q.Add(it) // returns at once: queued
	}
	waitPending(t, q, 6)
	close(r.hold)
	<-first.done
	for _, it := range items {
		if got := <-it.done; got != it.value {
			t.Fatalf("item %d answered %d", it.value, got)
		}
	}
	want := [][]int{{0}, {1, 2, 3, 4}, {5, 6}}
	if got := r.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
}

// Items with the same key never share a batch: the second waits for the
// next one.
func TestKeptApartItemsGoInDifferentBatches(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{}, 100)}
	q := batch.NewQueue(1, 8, r.send).KeepApart(func(it *item) any {
		if it.key == 0 {
			return nil
		}
		return it.key
	})
	go q.Add(newItem(0))
	<-r.started
	for v, key := range []int{7, 7, 0, 0, 8, 7} {
		it := newItem(v + 1)
		it.key = key
		q.Add(it)
	}
	waitPending(t, q, 6)
	close(r.hold)
	deadline := time.Now().Add(10 * time.Second)
	for len(r.recorded()) < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	want := [][]int{{0}, {1, 3, 4, 5}, {2}, {6}}
	if got := r.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v (key 7 once a batch)", got, want)
	}
}

// A withdrawn item is never sent; one already sent cannot be withdrawn.
func TestWithdrawnItemIsNotSent(t *testing.T) {
	r := &recorder{hold: make(chan struct{}), started: make(chan struct{}, 100)}
	q := batch.NewQueue(1, 8, r.send)
	first := newItem(0)
	go q.Add(first)
	<-r.started
	gone, kept := newItem(1), newItem(2)
	q.Add(gone)
	q.Add(kept)
	if !q.Withdraw(gone) {
		t.Fatal("Withdraw of a queued item = false")
	}
	close(r.hold)
	<-kept.done
	if q.Withdraw(kept) {
		t.Error("Withdraw of a sent item = true")
	}
	want := [][]int{{0}, {2}}
	if got := r.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
}

// With no lanes every item is sent alone, however many arrive at once.
func TestNoLanesSendsEveryItemAlone(t *testing.T) {
	r := &recorder{}
	q := batch.NewQueue(0, 8, r.send)
	var wg sync.WaitGroup
	for v := range 50 {
		wg.Go(func() { q.Add(newItem(v)) })
	}
	wg.Wait()
	for _, b := range r.recorded() {
		if len(b) != 1 {
			t.Fatalf("batch %v: want every item alone", b)
		}
	}
}

// Many goroutines adding at once: every item is answered exactly once,
// by its own value, no batch exceeds max, and lanes bound the batches in
// flight.
func TestConcurrentItemsAreEachAnsweredOnce(t *testing.T) {
	const lanes, maxBatch, n = 2, 16, 4000
	var (
		mu       sync.Mutex
		inFlight int
		peak     int
		sent     = map[int]int{}
	)
	q := batch.NewQueue(lanes, maxBatch, func(b []*item) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if len(b) > maxBatch {
			t.Errorf("batch of %d > max %d", len(b), maxBatch)
		}
		for _, it := range b {
			sent[it.value]++
		}
		mu.Unlock()
		time.Sleep(50 * time.Microsecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		for _, it := range b {
			it.done <- it.value
		}
	})
	var wg sync.WaitGroup
	for v := range n {
		wg.Go(func() {
			it := newItem(v)
			q.Add(it)
			if got := <-it.done; got != v {
				t.Errorf("item %d answered %d", v, got)
			}
		})
	}
	wg.Wait()
	if len(sent) != n {
		t.Errorf("%d items sent, want %d", len(sent), n)
	}
	for v, times := range sent {
		if times != 1 {
			t.Errorf("item %d sent %d times", v, times)
		}
	}
	if peak > lanes {
		t.Errorf("%d batches in flight at once, lanes %d", peak, lanes)
	}
}

// A batch's context outlives any one caller's cancellation and ends at the
// latest caller deadline, never later than the limit.
func TestContextTakesTheLatestDeadlineWithinTheLimit(t *testing.T) {
	now := time.Now()
	early, cancelEarly := context.WithDeadline(context.Background(), now.Add(time.Second))
	late, cancelLate := context.WithDeadline(context.Background(), now.Add(3*time.Second))
	defer cancelLate()
	cancelEarly()
	ctxs := []context.Context{early, late, context.Background()}
	self := func(c context.Context) context.Context { return c }

	ctx, cancel := batch.Context(ctxs, self, time.Minute)
	defer cancel()
	if ctx.Err() != nil {
		t.Fatalf("batch context ended with a caller's cancellation: %v", ctx.Err())
	}
	if d, _ := ctx.Deadline(); !d.Equal(now.Add(3 * time.Second)) {
		t.Errorf("deadline %v, want the latest caller's %v", d, now.Add(3*time.Second))
	}
	capped, cancelCapped := batch.Context(ctxs, self, time.Second)
	defer cancelCapped()
	if d, _ := capped.Deadline(); d.After(time.Now().Add(time.Second)) {
		t.Errorf("deadline %v beyond the 1s limit", d)
	}
}

// A call that takes a free lane with TryAlone holds it like a batch in
// flight: while it does, TryAlone refuses and items queue; DoneAlone sends
// the items queued meanwhile as the next batch.
func TestLoneCallHoldsItsLaneUntilDone(t *testing.T) {
	r := &recorder{}
	q := batch.NewQueue(1, 8, r.send)
	if !q.TryAlone() {
		t.Fatal("TryAlone on an idle queue = false")
	}
	if q.TryAlone() {
		t.Fatal("TryAlone with the only lane taken = true")
	}
	queued := []*item{newItem(1), newItem(2)}
	for _, it := range queued {
		q.Add(it)
	}
	waitPending(t, q, 2)
	q.DoneAlone()
	for _, it := range queued {
		<-it.done
	}
	if got, want := r.recorded(), [][]int{{1, 2}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	waitPending(t, q, 0)
	deadline := time.Now().Add(10 * time.Second)
	for !q.TryAlone() { // the batch's goroutine gives the lane back after answering
		if time.Now().After(deadline) {
			t.Fatal("TryAlone still refused after every call returned")
		}
		time.Sleep(time.Millisecond)
	}
	q.DoneAlone()
}

// With no lanes every call goes alone.
func TestNoLanesLetsEveryCallAlone(t *testing.T) {
	q := batch.NewQueue(0, 8, (&recorder{}).send)
	for range 3 {
		if !q.TryAlone() {
			t.Fatal("TryAlone without lanes = false")
		}
	}
	q.DoneAlone()
}

// Lone calls and batched items from many goroutines at once: every item is
// answered exactly once, and lone calls and batches together never exceed
// the lanes.
func TestLoneCallsAndBatchesShareTheLanes(t *testing.T) {
	const lanes, maxBatch, n = 3, 16, 4000
	var (
		mu       sync.Mutex
		inFlight int
		peak     int
		sent     = map[int]int{}
	)
	enter := func() {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
	}
	leave := func() {
		time.Sleep(20 * time.Microsecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	q := batch.NewQueue(lanes, maxBatch, func(b []*item) {
		enter()
		mu.Lock()
		for _, it := range b {
			sent[it.value]++
		}
		mu.Unlock()
		leave()
		for _, it := range b {
			it.done <- it.value
		}
	})
	var wg sync.WaitGroup
	var lone, queued int64
	var countMu sync.Mutex
	for v := range n {
		wg.Go(func() {
			if q.TryAlone() {
				enter()
				leave()
				q.DoneAlone()
				countMu.Lock()
				lone++
				countMu.Unlock()
				return
			}
			countMu.Lock()
			queued++
			countMu.Unlock()
			it := newItem(v)
			q.Add(it)
			if got := <-it.done; got != v {
				t.Errorf("item %d answered %d", v, got)
			}
		})
	}
	wg.Wait()
	if int64(len(sent)) != queued {
		t.Errorf("%d items sent, %d queued", len(sent), queued)
	}
	for v, times := range sent {
		if times != 1 {
			t.Errorf("item %d sent %d times", v, times)
		}
	}
	if peak > lanes {
		t.Errorf("%d calls and batches in flight at once, lanes %d", peak, lanes)
	}
	t.Logf("%d calls alone, %d batched", lone, queued)
}
