package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// sealTTL outlives every seal test.
const sealTTL = time.Minute

func canSeal(h Harness) bool {
	_, ok := h.Backend.(backend.Sealer)
	return ok
}

func expectSealed(t *testing.T, err error) {
	t.Helper()
	var sealed *lock.SealedError
	if !errors.As(err, &sealed) || !errors.Is(err, lock.ErrSealed) {
		t.Fatalf("got %v, want *lock.SealedError", err)
	}
}

// A sealed key refuses at once, even a caller willing to wait; a backend
// that cannot seal releases the key instead.
func testSealRefusesAtOnce(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	if err := sealOf(t, l).Seal(context.Background(), sealTTL); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	if cause := context.Cause(l.Context()); cause != lock.ErrReleased {
		t.Errorf("lease context cause after Seal = %v, want ErrReleased", cause)
	}
	if err := sealOf(t, l).Seal(context.Background(), sealTTL); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Seal: %v, want ErrNotHeld", err)
	}
	start := time.Now()
	next, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 5 * time.Second})
	if !canSeal(h) {
		if err != nil {
			t.Fatalf("Acquire after Seal on a backend that cannot seal: %v, want the lock (Seal released it)", err)
		}
		_ = next.Release(context.Background())
		return
	}
	expectSealed(t, err)
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("Acquire of a sealed key took %v, want an answer at once", waited)
	}
}

// A waiter is woken by the seal and told at once.
func testSealWakesWaiters(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{TTL: 20 * time.Second})
	answer := make(chan error, 1)
	go func() {
		w, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: 10 * time.Second})
		if err == nil {
			_ = w.Release(context.Background())
		}
		answer <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the waiter subscribe
	if err := sealOf(t, l).Seal(context.Background(), sealTTL); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	select {
	case err := <-answer:
		if canSeal(h) {
			expectSealed(t, err)
		} else if err != nil {
			t.Fatalf("waiter on a backend that cannot seal: %v, want the lock", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken by the seal within 5s (the holder's TTL is 20s)")
	}
}

// Options.Unseal takes a sealed key with a newer fence, still exclusively;
// its Release leaves the key free.
func testUnseal(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	if !canSeal(h) {
		// Nothing is ever sealed: Unseal is a plain, exclusive acquire.
		l := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second, Unseal: true})
		_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Unseal: true})
		_ = expectHeld(t, err)
		_ = l.Release(context.Background())
		return
	}
	sealer := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	if err := sealOf(t, sealer).Seal(context.Background(), sealTTL); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	start := time.Now()
	unsealer := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second, Unseal: true})
	if took := time.Since(start); took < lock.SealMemory {
		t.Errorf("Acquire that lifted a seal returned after %v, want it to wait out lock.SealMemory (%v)", took, lock.SealMemory)
	}
	if unsealer.Fence() <= sealer.Fence() {
		t.Errorf("fence after unseal %d, want above the sealer's %d", unsealer.Fence(), sealer.Fence())
	}
	_, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Unseal: true})
	_ = expectHeld(t, err)
	if err := unsealer.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	free := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	_ = free.Release(context.Background())
	// Unseal on a free key is a plain acquire.
	plain := mustAcquire(t, c, key, lock.Options{TTL: time.Second, Unseal: true})
	_ = plain.Release(context.Background())
}

// Only the holder seals: a lease that lost its key seals nothing.
func testSealByOwnerOnly(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	stale := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	h.Delete(key)
	newer := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	if err := sealOf(t, stale).Seal(context.Background(), sealTTL); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Seal by a lease whose key was taken: %v, want ErrNotHeld", err)
	}
	if err := newer.Release(context.Background()); err != nil {
		t.Fatalf("the newer holder's Release after a stale Seal: %v, want nil", err)
	}
	l := mustAcquire(t, c, key, lock.Options{TTL: time.Second})
	_ = l.Release(context.Background())
}

// A seal ends at its TTL: it is a cache of a fact, never a permanent block.
func testSealExpires(t *testing.T, h Harness) {
	c, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, c, key, lock.Options{TTL: 5 * time.Second})
	if err := sealOf(t, l).Seal(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		next, err := c.Acquire(context.Background(), key, lock.Options{TTL: time.Second})
		if err == nil {
			_ = next.Release(context.Background())
			return
		}
		if !errors.Is(err, lock.ErrSealed) {
			t.Fatalf("Acquire: %v, want ErrSealed until the seal expires", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("a 100ms seal still refused after 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A seal's note comes back with every Acquire it refuses: from the store,
// and from a Client's memory of the seal (Config.RememberSeals), for the
// Client that sealed and for one that only saw the seal. A seal made by
// Seal has an empty note. A noted seal is lifted by Options.Unseal like any
// other. A backend that seals without notes gives an empty Note; one that
// cannot seal releases the key.
func testSealNote(t *testing.T, h Harness) {
	const note = "0123456789abcdef"
	sealer, key := client(t, h.Backend), newKey()
	l := mustAcquire(t, sealer, key, lock.Options{TTL: 5 * time.Second})
	noted := sealOf(t, l)
	if err := noted.SealWithNote(context.Background(), sealTTL, note); err != nil {
		t.Fatalf("SealWithNote: %v", err)
	}
	if err := noted.SealWithNote(context.Background(), sealTTL, note); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second SealWithNote: %v, want ErrNotHeld", err)
	}
	if !canSeal(h) {
		free := mustAcquire(t, sealer, key, lock.Options{TTL: time.Second})
		_ = free.Release(context.Background())
		return
	}
	want := note
	remembering := lock.New(h.Backend, lock.Config{RememberSeals: true})
	t.Cleanup(remembering.Close)
	for _, ask := range []struct {
		name   string
		client *lock.Client
	}{
		{"store", sealer},
		{"store, remembered next", remembering},
		{"memory", remembering},
	} {
		_, err := ask.client.Acquire(context.Background(), key, lock.Options{TTL: time.Second, Wait: time.Second})
		expectSealed(t, err)
		var sealed *lock.SealedError
		errors.As(err, &sealed)
		if sealed.Note != want || sealed.Key != key {
			t.Errorf("%s: SealedError{Key: %q, Note: %q}, want {%q, %q}", ask.name, sealed.Key, sealed.Note, key, want)
		}
	}

	// A seal without a note says so, from the store and from the memory
	// of the Client that made it.
	plainKey := newKey()
	plain := mustAcquire(t, remembering, plainKey, lock.Options{TTL: 5 * time.Second})
	if err := sealOf(t, plain).Seal(context.Background(), sealTTL); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	for _, c := range []*lock.Client{remembering, sealer} {
		_, err := c.Acquire(context.Background(), plainKey, lock.Options{TTL: time.Second})
		expectSealed(t, err)
		if sealed := (*lock.SealedError)(nil); errors.As(err, &sealed) && sealed.Note != "" {
			t.Errorf("seal made by Seal: Note %q, want none", sealed.Note)
		}
	}

	unsealed := mustAcquire(t, sealer, key, lock.Options{TTL: 5 * time.Second, Unseal: true})
	if err := unsealed.Release(context.Background()); err != nil {
		t.Fatalf("Release after lifting a noted seal: %v", err)
	}
	free := mustAcquire(t, sealer, key, lock.Options{TTL: time.Second})
	_ = free.Release(context.Background())
}

// sealOf is l's Sealer: every lease of a Client can seal (a backend that
// cannot seal releases instead).
func sealOf(t *testing.T, l lock.Lease) lock.Sealer {
	t.Helper()
	s, ok := l.(lock.Sealer)
	if !ok {
		t.Fatalf("%T does not implement lock.Sealer", l)
	}
	return s
}
