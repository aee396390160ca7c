package waitroom

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowQueued is a Store whose Queued answers "no queue" once released,
// counting its calls; nothing else of it is used.
type slowQueued struct {
	Store
	calls   atomic.Int64
	release chan struct{}
}

func (s *slowQueued) Queued(ctx context.Context, _ int64) (bool, error) {
	s.calls.Add(1)
	select {
	case <-s.release:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// When what an instance read of a schedule's queue expires, every booking
// of the schedule in flight misses at once: they share one read of the
// store, not one each (a hot seat's 64 connections would each hold a
// Redis connection for it).
func TestCheckSharesOneReadOfTheQueue(t *testing.T) {
	store := &slowQueued{release: make(chan struct{})}
	r := NewRoom(store, NewAdmissions([]byte("k")), Config{})
	const callers = 64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			errs <- checkErr(r.Check(context.Background(), 7, "user", ""))
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for store.calls.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the other callers arrive meanwhile
	close(store.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Check on a schedule without a queue: %v", err)
		}
	}
	if n := store.calls.Load(); n != 1 {
		t.Errorf("%d concurrent misses read the store %d times, want once", callers, n)
	}
}

// A caller that stops waiting gets its context's error; the read goes on
// for the others.
func TestCheckCallerGivesUpAlone(t *testing.T) {
	store := &slowQueued{release: make(chan struct{})}
	r := NewRoom(store, NewAdmissions([]byte("k")), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- checkErr(r.Check(ctx, 7, "user", "")) }()
	for store.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() { second <- checkErr(r.Check(context.Background(), 7, "user", "")) }()
	cancel()
	if err := <-first; err != context.Canceled {
		t.Fatalf("the caller that gave up got %v, want context.Canceled", err)
	}
	close(store.release)
	if err := <-second; err != nil {
		t.Fatalf("the caller still waiting got %v, want the read's answer", err)
	}
}

// A Put on this instance is followed by a fresh read, not by the answer of
// a read begun before it.
func TestCheckAfterPutReadsAgain(t *testing.T) {
	store := &slowQueued{release: make(chan struct{})}
	r := NewRoom(store, NewAdmissions([]byte("k")), Config{})
	before := make(chan error, 1)
	go func() { before <- checkErr(r.Check(context.Background(), 7, "user", "")) }()
	for store.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	r.forget(7) // what Put and Delete do once the store has the change
	after := make(chan error, 1)
	go func() { after <- checkErr(r.Check(context.Background(), 7, "user", "")) }()
	deadline := time.Now().Add(5 * time.Second)
	for store.calls.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(store.release)
	if err := <-before; err != nil {
		t.Errorf("the check begun before the change: %v", err)
	}
	if err := <-after; err != nil {
		t.Errorf("the check begun after the change: %v", err)
	}
	if n := store.calls.Load(); n != 2 {
		t.Errorf("the store was read %d times, want twice: once before the change, once after", n)
	}
}

// checkErr is Check's error alone: these schedules have no queue.
func checkErr(_ bool, err error) error { return err }
