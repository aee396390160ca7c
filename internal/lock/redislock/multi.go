package redislock

import (
	"context"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

var (
	_ backend.Inspector    = (*Backend)(nil)
	_ backend.MultiBackend = (*Backend)(nil)
)

// storageKeys returns the storage keys of keys, refusing keys of different
// slots (ErrCrossSlot).
func storageKeys(keys []string) ([]string, error) {
	stored := make([]string, len(keys))
	for i, k := range keys {
		stored[i] = storageKey(k)
	}
	if err := sameSlot(keys, stored); err != nil {
		return nil, err
	}
	return stored, nil
}

// TryAcquireAll implements backend.MultiBackend in one script call: every key
// or none. Keys must share one cluster slot (ErrCrossSlot otherwise).
func (b *Backend) TryAcquireAll(ctx context.Context, keys []string, token string, ttl time.Duration) (backend.MultiGrant, error) {
	stored, err := storageKeys(keys)
	if err != nil {
		return backend.MultiGrant{}, err
	}
	scriptKeys := append(stored, make([]string, len(keys))...)
	for i, k := range keys {
		scriptKeys[len(keys)+i] = FenceKey(k)
	}
	deadline, by, err := b.clock.deadline(ctx)
	if err != nil {
		return backend.MultiGrant{}, classify("acquire: measure the server's clock", err)
	}
	reply, err := acquireAllScript.Run(ctx, b.client, scriptKeys, token, ttl.Milliseconds(), fenceCounterTTL(ttl), deadline).Int64Slice()
	if err != nil {
		return backend.MultiGrant{}, uncertain(classify("acquire", err), by)
	}
	switch {
	case len(reply) == 1 && reply[0] == 2:
		return backend.MultiGrant{}, uncertain(pastDeadline("acquire"), by)
	case len(reply) == len(keys)+1 && reply[0] == 1:
		return backend.MultiGrant{Acquired: true, Fences: reply[1:]}, nil
	case len(reply) >= 3 && len(reply)%2 == 1 && reply[0] == 0:
		var held []backend.KeyHeld
		for i := 1; i < len(reply); i += 2 {
			idx := reply[i] - 1
			if idx < 0 || idx >= int64(len(keys)) {
				return backend.MultiGrant{}, fmt.Errorf("redislock: acquire: unexpected reply %v", reply)
			}
			held = append(held, backend.KeyHeld{Key: keys[idx], Remaining: millis(reply[i+1])})
		}
		return backend.MultiGrant{Held: held}, nil
	}
	return backend.MultiGrant{}, fmt.Errorf("redislock: acquire: unexpected reply %v", reply)
}

// millis converts a PTTL reply; -1 (no expiry) is zero, unknown.
func millis(pttl int64) time.Duration { return time.Duration(max(pttl, 0)) * time.Millisecond }

// ExtendAll implements backend.MultiBackend in one script call.
func (b *Backend) ExtendAll(ctx context.Context, keys []string, token string, ttl time.Duration) (bool, error) {
	stored, err := storageKeys(keys)
	if err != nil {
		return false, err
	}
	n, err := extendAllScript.Run(ctx, b.client, stored, token, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, classify("extend", err)
	}
	return n == int64(len(keys)), nil
}

// ReleaseAll implements backend.MultiBackend in one script call, publishing on
// the release channel of each key it deletes.
func (b *Backend) ReleaseAll(ctx context.Context, keys []string, token string) (int, error) {
	stored, err := storageKeys(keys)
	if err != nil {
		return 0, err
	}
	args := make([]any, 0, len(keys)+1)
	args = append(args, token)
	for _, k := range keys {
		args = append(args, releaseChannel(k))
	}
	n, err := releaseAllScript.Run(ctx, b.client, stored, args...).Int64()
	if err != nil {
		return 0, classify("release", err)
	}
	return int(n), nil
}

// Holds implements backend.Inspector in one owner-checked script call.
func (b *Backend) Holds(ctx context.Context, key, token string) (time.Duration, bool, error) {
	return b.HoldsAll(ctx, []string{key}, token)
}

// HoldsAll implements backend.MultiBackend in one script call.
func (b *Backend) HoldsAll(ctx context.Context, keys []string, token string) (time.Duration, bool, error) {
	stored, err := storageKeys(keys)
	if err != nil {
		return 0, false, err
	}
	pttl, err := holdsScript.Run(ctx, b.client, stored, token).Int64()
	if err != nil {
		return 0, false, classify("holds", err)
	}
	if pttl == -2 {
		return 0, false, nil
	}
	return millis(pttl), true, nil
}
