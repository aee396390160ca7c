package lock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/memlock"
)

// countingStore counts the acquisitions that reach the store.
type countingStore struct {
	*memlock.Backend
	tries atomic.Int64
}

func (s *countingStore) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	s.tries.Add(1)
	return s.Backend.TryAcquire(ctx, key, token, ttl)
}

func sealKey(t *testing.T, c *lock.Client, key string) {
	t.Helper()
	l, err := c.Acquire(context.Background(), key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(lock.Sealer).Seal(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
}

// A remembered seal is answered without the store for SealMemory; then the
// store is asked again, once, and the answer remembered again.
func TestRememberedSealSparesTheStore(t *testing.T) {
	store := &countingStore{Backend: memlock.New()}
	c := lock.New(store, lock.Config{RememberSeals: true})
	t.Cleanup(c.Close)
	sealKey(t, c, "k")
	store.tries.Store(0)

	for range 100 {
		_, err := c.Acquire(context.Background(), "k", lock.Options{TTL: time.Second, Wait: time.Second})
		if !errors.Is(err, lock.ErrSealed) {
			t.Fatalf("Acquire of a sealed key: %v, want ErrSealed", err)
		}
	}
	if n := store.tries.Load(); n != 0 {
		t.Errorf("store asked %d times within SealMemory after sealing, want 0", n)
	}
	time.Sleep(lock.SealMemory + 50*time.Millisecond)
	for range 10 {
		if _, err := c.Acquire(context.Background(), "k", lock.Options{TTL: time.Second}); !errors.Is(err, lock.ErrSealed) {
			t.Fatalf("Acquire after SealMemory: %v, want ErrSealed from the store", err)
		}
	}
	if n := store.tries.Load(); n != 1 {
		t.Errorf("store asked %d times after the memory expired, want 1 (then remembered again)", n)
	}

	// Without RememberSeals, every Acquire asks.
	plain := lock.New(store, lock.Config{})
	t.Cleanup(plain.Close)
	store.tries.Store(0)
	for range 5 {
		_, _ = plain.Acquire(context.Background(), "k", lock.Options{TTL: time.Second})
	}
	if n := store.tries.Load(); n != 5 {
		t.Errorf("store asked %d times by a Client that does not remember, want 5", n)
	}
}

// No Client ever answers from memory that a key is sealed once an Acquire
// that lifted its seal has returned: many goroutines of a remembering
// Client hammer the key while another Client unseals it and releases; no
// Acquire begun after that release is refused as sealed.
func TestRememberedSealNeverOutlivesUnseal(t *testing.T) {
	store := memlock.New()
	hammered := lock.New(store, lock.Config{RememberSeals: true})
	canceller := lock.New(store, lock.Config{})
	t.Cleanup(hammered.Close)
	t.Cleanup(canceller.Close)
	sealKey(t, hammered, "seat")

	var (
		freedAt   atomic.Int64 // unix nanos; 0 until the seal is lifted and the key released
		stop      = make(chan struct{})
		wg        sync.WaitGroup
		violation atomic.Value
		refusals  atomic.Int64
	)
	for range 16 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				began := time.Now().UnixNano()
				l, err := hammered.Acquire(context.Background(), "seat", lock.Options{TTL: time.Second})
				switch {
				case errors.Is(err, lock.ErrSealed):
					refusals.Add(1)
					if freed := freedAt.Load(); freed != 0 && began > freed {
						violation.Store("an Acquire begun after the seal was lifted and the key released was refused as sealed")
					}
				case err == nil:
					_ = l.Release(context.Background())
				}
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the hammered Client remembers the seal
	l, err := canceller.Acquire(context.Background(), "seat", lock.Options{TTL: 5 * time.Second, Unseal: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	freedAt.Store(time.Now().UnixNano())
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if v := violation.Load(); v != nil {
		t.Fatal(v)
	}
	if refusals.Load() == 0 {
		t.Fatal("the hammering Client was never refused: the scenario did not happen")
	}
}

// An Acquire that would lift a seal gives up, releasing, when its context
// ends while it waits out the remembered seals.
func TestUnsealWaitBoundedByContext(t *testing.T) {
	store := memlock.New()
	c := lock.New(store, lock.Config{})
	t.Cleanup(c.Close)
	sealKey(t, c, "k")
	ctx, cancel := context.WithTimeout(context.Background(), lock.SealMemory/5)
	defer cancel()
	if _, err := c.Acquire(ctx, "k", lock.Options{TTL: 5 * time.Second, Unseal: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unseal cut short by its context: %v, want DeadlineExceeded", err)
	}
	l, err := c.Acquire(context.Background(), "k", lock.Options{TTL: time.Second})
	if err != nil {
		t.Fatalf("Acquire after the abandoned unseal: %v, want the key free (the lease was released)", err)
	}
	_ = l.Release(context.Background())
}

// An Acquire answered from memory says what the store said: the key and
// the seal's note, on every answer.
func TestRememberedSealKeepsItsNote(t *testing.T) {
	store := &countingStore{Backend: memlock.New()}
	c := lock.New(store, lock.Config{RememberSeals: true})
	t.Cleanup(c.Close)
	l, err := c.Acquire(context.Background(), "seat:1:7", lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(lock.Sealer).SealWithNote(context.Background(), time.Hour, "alice"); err != nil {
		t.Fatal(err)
	}
	store.tries.Store(0)
	for range 3 {
		_, err := c.Acquire(context.Background(), "seat:1:7", lock.Options{TTL: time.Second})
		sealed, ok := errors.AsType[*lock.SealedError](err)
		if !ok || sealed.Key != "seat:1:7" || sealed.Note != "alice" {
			t.Fatalf("Acquire of a remembered seal: %#v, want SealedError{seat:1:7, alice}", err)
		}
	}
	if n := store.tries.Load(); n != 0 {
		t.Errorf("store asked %d times, want the answers from memory", n)
	}
}
