package redislock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// A noted seal is "sealed:<note>" under the key's exact name, readable with
// GET; every value that is a seal refuses with its note, including the
// plain "sealed" of instances that knew no notes, and Options.Unseal lifts
// each. A value that merely starts with "sealed" is someone's hold.
func TestSealValues(t *testing.T) {
	t.Parallel()
	client := lockenv.Redis(t)
	locker := lock.New(newBackend(t, client), lock.Config{})
	t.Cleanup(locker.Close)
	ctx := context.Background()

	key := "lock:{schedule:" + lockenv.Name("") + "}:seat:1"
	l, err := locker.Acquire(ctx, key, lock.Options{TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(lock.Sealer).SealWithNote(ctx, time.Minute, "a1b2"); err != nil {
		t.Fatal(err)
	}
	if v := client.Get(ctx, key).Val(); v != "sealed:a1b2" || v != redislock.SealedWith("a1b2") {
		t.Errorf("GET %s = %q, want %q", key, v, "sealed:a1b2")
	}
	if got := redislock.SealedWith(""); got != redislock.SealValue {
		t.Errorf("SealedWith(\"\") = %q, want SealValue %q", got, redislock.SealValue)
	}

	for value, note := range map[string]string{
		"sealed":          "",
		"sealed:":         "",
		"sealed:a1b2":     "a1b2",
		"sealed:with:two": "with:two",
	} {
		key := "lock:{schedule:" + lockenv.Name("") + "}:seat:2"
		client.Set(ctx, key, value, time.Minute)
		_, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second})
		var sealed *lock.SealedError
		if !errors.As(err, &sealed) || sealed.Note != note {
			t.Errorf("key holding %q: Acquire gave %v, want *SealedError with Note %q", value, err, note)
		}
		lifted, err := locker.Acquire(ctx, key, lock.Options{TTL: time.Second, Unseal: true})
		if err != nil {
			t.Errorf("key holding %q: Unseal: %v", value, err)
			continue
		}
		_ = lifted.Release(ctx)
	}

	for value, want := range map[string]bool{
		"sealed": true, "sealed:": true, "sealed:a1b2": true,
		"sealedbysomeone": false, "0123456789abcdef0123456789abcdef": false, "": false,
	} {
		if got := redislock.IsSeal(value); got != want {
			t.Errorf("IsSeal(%q) = %v, want %v", value, got, want)
		}
	}

	key = "lock:{schedule:" + lockenv.Name("") + "}:seat:3"
	client.Set(ctx, key, "sealedbysomeone", time.Minute)
	for _, unseal := range []bool{false, true} {
		_, err = locker.Acquire(ctx, key, lock.Options{TTL: time.Second, Unseal: unseal})
		if !errors.Is(err, lock.ErrHeld) {
			t.Errorf("key holding %q (unseal %v): %v, want ErrHeld", "sealedbysomeone", unseal, err)
		}
	}
}
