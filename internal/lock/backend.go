package lock

import (
	"context"
	"time"
)

// Backend is what a store adapter implements: the atomic primitives on one
// lock store. Client builds every behaviour of the port on them. Each method
// wraps a failure to reach the store with ErrUnavailable.
type Backend interface {
	// TryAcquire takes key for token for ttl if nobody holds it and, in
	// the same atomic step, mints a fencing token strictly greater than
	// every earlier one for key. When the key is held it reports the
	// holder's remaining TTL instead.
	TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (Grant, error)
	// Extend sets key's TTL to ttl if token still holds it; false if not.
	Extend(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
	// Release deletes key if token still holds it and wakes the
	// subscribers of key; false if token did not hold it.
	Release(ctx context.Context, key, token string) (bool, error)
	// Subscribe returns a subscription to key's releases. It returns once
	// the store confirmed the subscription, so a release that happens
	// after Subscribe returned is never missed (one that happens during
	// the call may be; Client re-checks at the holder's TTL).
	Subscribe(ctx context.Context, key string) (Subscription, error)
}

// Grant is the outcome of TryAcquire.
type Grant struct {
	Acquired bool
	// Fence is the new fencing token when Acquired.
	Fence int64
	// Remaining is the holder's remaining TTL when not Acquired; zero if
	// unknown.
	Remaining time.Duration
}

// Subscription delivers release notifications of one key.
type Subscription interface {
	// Released receives a value after each release of the key (several
	// releases may coalesce into one value).
	Released() <-chan struct{}
	// Close ends the subscription.
	Close()
}
