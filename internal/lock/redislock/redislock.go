// Package redislock is the Redis adapter of the lock port: a backend.Backend for
// standalone Redis and Redis Cluster.
//
// A lock is one string key whose value is the holder's random token, written
// with SET PX so that it expires on its own. In the same Lua call the fence
// counter of the key's hash tag ("{tag}:fence", FenceKey) is incremented; a
// missing counter (new tag, FLUSHALL, restart without persistence, failover
// to an empty replica)
// starts from the Redis server's clock in microseconds, so fencing tokens
// keep growing even when Redis forgets everything. Release is an
// owner-checked compare-and-delete that PUBLISHes on "<key>:released" in the
// same script, which wakes waiters.
//
// All of a lock's keys share the lock key's hash tag, so they live in one
// Redis Cluster slot. A key without a hash tag is stored as "{key}" to give
// it one. The fence counter expires FenceCounterTTL after it was made or
// last refreshed (every 64th acquisition of its key refreshes it).
//
// Every script is idempotent per owner token: running the acquire again with
// the token that holds the key renews it and returns a fence no lower than
// the first (the tag's counter, see FenceKey; still in order), so a
// transport retry whose first reply was lost gets its caller's own lock back
// instead of "held by another owner". go-redis' own retries after transport
// errors (redis.Options.MaxRetries) are therefore safe; a retried
// release whose first run deleted the key answers "not held".
//
// An acquire carries its caller's context deadline converted to the
// server's clock (clock.go) and takes nothing when Redis runs it past that
// (deadline.lua): an acquire queued in a stalled server (a long fork,
// SIGSTOP, a paused VM) that runs after its caller gave up leaves the key
// free. Its failure is a backend.UncertainError saying by when it could
// still have taken effect.
//
// Several keys are taken at once (backend.MultiBackend) by one script, all or
// none; they must share one cluster slot, or ErrCrossSlot is returned before
// Redis is asked, on a standalone server too.
//
// Waiters of one Backend share one Pub/Sub connection. go-redis re-subscribes
// after that connection drops, and every re-subscription wakes the channel's
// waiters to look again, since a release published meanwhile was lost.
package redislock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/backend"
	"github.com/seatlock/seatlock/internal/lock/redisbatch"
)

var (
	//go:embed fence.lua
	fenceSource string
	//go:embed sealed.lua
	isSealSource string
	//go:embed acquire.lua
	acquireSource string
	//go:embed unseal.lua
	unsealSource string
	//go:embed extend.lua
	extendSource string
	//go:embed release.lua
	releaseSource string
	//go:embed deadline.lua
	deadlineSource string

	acquireScript = newScript(deadlineSource + isSealSource + fenceSource + acquireSource)
	unsealScript  = newScript(deadlineSource + isSealSource + fenceSource + unsealSource)
	//go:embed acquire_all.lua
	acquireAllSource string
	//go:embed extend_all.lua
	extendAllSource string
	//go:embed release_all.lua
	releaseAllSource string
	//go:embed holds.lua
	holdsSource string
	//go:embed seal.lua
	sealSource string

	acquireAllScript = redis.NewScript(deadlineSource + fenceSource + acquireAllSource)
	extendAllScript  = redis.NewScript(extendAllSource)
	releaseAllScript = redis.NewScript(releaseAllSource)
	holdsScript      = redis.NewScript(holdsSource)
	extendScript     = newScript(extendSource)
	releaseScript    = newScript(releaseSource)
	sealScript       = newScript(sealSource)
)

// SealValue is what a key sealed without a note holds (backend.Sealer):
// never a token, which is 32 hexadecimal digits. A seal with a note
// (backend.Sealer's SealWithNote) holds SealValue, ':' and the note (SealedWith).
// Every value that is SealValue or starts with SealValue+":" is a seal,
// including the plain SealValue of instances that knew no notes. An
// operator can read it with GET and lift the seal with DEL.
const SealValue = "sealed"

// SealedWith is the value of a key sealed with note: SealValue alone for
// an empty note, else "sealed:<note>".
func SealedWith(note string) string {
	if note == "" {
		return SealValue
	}
	return SealValue + ":" + note
}

// IsSeal reports whether a lock key's value is a seal (SealValue, or
// SealValue, ':' and a note) rather than a holder's token: what the
// scripts' is_seal decides.
func IsSeal(value string) bool {
	return value == SealValue || strings.HasPrefix(value, SealValue+":")
}

// sealNote is the note of a seal's value (SealedWith's inverse).
func sealNote(value string) string {
	if note, noted := strings.CutPrefix(value, SealValue+":"); noted {
		return note
	}
	return "" // the plain SealValue
}

// Client is what the backend needs of go-redis: *redis.Client and
// *redis.ClusterClient both are one.
type Client interface {
	redis.Scripter
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// Backend implements backend.Backend on Redis.
type Backend struct {
	client   Client
	doer     redisbatch.Doer      // client, when it can send calls laid out by call.go
	pipeline *redisbatch.Pipeline // nil: every call alone
	notifier *notifier
	clock    *clock
	lastTTL  atomic.Pointer[scriptTTL]
}

var (
	_ backend.Backend = (*Backend)(nil)
	_ backend.Sealer  = (*Backend)(nil)
)

// Option tunes New.
type Option func(*options)

type options struct {
	lanes int
}

// WithBatchLanes sets how many calls or batches of calls may be in flight
// at once (redisbatch.DefaultLanes, 8); n <= 0 sends every call alone.
func WithBatchLanes(n int) Option {
	return func(o *options) { o.lanes = n }
}

// New returns a Backend on client. The client should have
// ContextTimeoutEnabled so that context deadlines bound every call. Close
// the Backend to end its Pub/Sub connection.
//
// When client can pipeline (*redis.Client and *redis.ClusterClient can),
// the acquisitions, seals, extensions and releases of one key go alone, at
// once, while fewer than WithBatchLanes calls or batches are in flight;
// those that find every lane busy go to Redis together, in one pipeline
// (see package redisbatch). So a few callers never wait for a batch, and a
// crowd shares round trips.
func New(client Client, opts ...Option) *Backend {
	o := options{lanes: redisbatch.DefaultLanes}
	for _, opt := range opts {
		opt(&o)
	}
	b := &Backend{client: client, notifier: newNotifier(client), clock: newClock(client)}
	b.doer, _ = client.(redisbatch.Doer)
	if pc, ok := client.(redisbatch.Client); ok && o.lanes > 0 {
		b.pipeline = redisbatch.New(pc, o.lanes)
	}
	return b
}

// Close ends the shared Pub/Sub connection used by waiters and a
// measurement of the server's clock in progress.
func (b *Backend) Close() error {
	b.clock.close()
	return b.notifier.close()
}

// storageKey gives a key without a hash tag one, so that its fence counter
// and release channel can share its cluster slot.
func storageKey(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key
		}
	}
	return "{" + key + "}"
}

// FenceKey is the counter that mints key's fences: one per hash tag
// ("{order:7}:fence" for every key tagged {order:7}; "{key}:fence" for a
// key without a tag). Every acquisition of any key of the tag moves it on,
// so fences still grow strictly for each key, and Redis keeps one counter
// per tag, not one per key.
func FenceKey(key string) string {
	stored := storageKey(key)
	open := strings.IndexByte(stored, '{')
	end := open + 1 + strings.IndexByte(stored[open+1:], '}')
	return stored[open:end+1] + ":fence"
}

func releaseChannel(key string) string { return storageKey(key) + ":released" }

// FenceCounterTTL is how long a fence counter ("<key>:fence") lives after
// it was made or last refreshed (plus the lock's TTL); every 64th
// acquisition of its key refreshes it. So a counter disappears only for keys
// locked fewer than 64 times in that long, and Redis does not keep one key
// for every key ever locked. Losing a counter is safe: it restarts from the
// Redis clock, above every fence handed out before.
const FenceCounterTTL = 24 * time.Hour

func fenceCounterTTL(ttl time.Duration) int64 { return (FenceCounterTTL + ttl).Milliseconds() }

// TryAcquire implements backend.Backend in one round trip. Re-running it with
// the token that holds key succeeds (see acquire.lua for its fence). A
// sealed key is reported as backend.Grant.Sealed, with the seal's note, in
// the same round trip.
func (b *Backend) TryAcquire(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	deadline, by, err := b.clock.deadline(ctx)
	if err != nil {
		return backend.Grant{}, classify("acquire: measure the server's clock", err)
	}
	reply, err := b.call(ctx, b.acquireCall(acquireScript, key, token, ttl, deadline)).Result()
	if err != nil {
		return backend.Grant{}, uncertain(classify("acquire", err), by)
	}
	switch reply := reply.(type) {
	case string:
		return backend.Grant{Sealed: true, Note: sealNote(reply)}, nil
	case int64:
		if reply == 0 {
			return backend.Grant{}, uncertain(pastDeadline("acquire"), by)
		}
		if reply > 0 {
			return backend.Grant{Acquired: true, Fence: reply}, nil
		}
		// -2 - PTTL; a PTTL of -1 means a key without expiry (set by
		// hand): unknown.
		return backend.Grant{Remaining: time.Duration(max(-reply-2, 0)) * time.Millisecond}, nil
	}
	return backend.Grant{}, fmt.Errorf("redislock: acquire: unexpected reply %v", reply)
}

// TryAcquireSealed implements backend.Sealer: TryAcquire that also takes a
// sealed key, reporting Sealed with Acquired when it lifted a seal.
func (b *Backend) TryAcquireSealed(ctx context.Context, key, token string, ttl time.Duration) (backend.Grant, error) {
	deadline, by, err := b.clock.deadline(ctx)
	if err != nil {
		return backend.Grant{}, classify("unseal: measure the server's clock", err)
	}
	reply, err := b.call(ctx, b.acquireCall(unsealScript, key, token, ttl, deadline)).Int64Slice()
	switch {
	case err != nil:
		return backend.Grant{}, uncertain(classify("unseal", err), by)
	case len(reply) == 1 && reply[0] == 2:
		return backend.Grant{}, uncertain(pastDeadline("unseal"), by)
	case len(reply) == 3 && reply[0] == 1:
		return backend.Grant{Acquired: true, Fence: reply[1], Sealed: reply[2] == 1}, nil
	case len(reply) == 2 && reply[0] == 0:
		return backend.Grant{Remaining: time.Duration(max(reply[1], 0)) * time.Millisecond}, nil
	}
	return backend.Grant{}, fmt.Errorf("redislock: unseal: unexpected reply %v", reply)
}

// Seal implements backend.Sealer: the key's value becomes SealValue for ttl.
func (b *Backend) Seal(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	return b.SealWithNote(ctx, key, token, ttl, "")
}

// SealWithNote implements backend.Sealer: the key's value becomes
// SealedWith(note) for ttl.
func (b *Backend) SealWithNote(ctx context.Context, key, token string, ttl time.Duration, note string) (bool, error) {
	c := newCall(sealScript)
	c.key(storageKey(key))
	c.str(token)
	c.int(ttl.Milliseconds())
	c.str(SealedWith(note))
	n, err := b.call(ctx, c).Int64()
	if err != nil {
		return false, classify("seal", err)
	}
	return n == 1, nil
}

// scriptTTL is a TTL as the scripts take it, boxed once: a Backend sees
// the same TTL on almost every call, and boxing an int64 allocates.
type scriptTTL struct {
	ttl                time.Duration
	ms, fenceCounterMs any
}

// ttlArgs returns ttl's script arguments, reusing the last ones made.
func (b *Backend) ttlArgs(ttl time.Duration) *scriptTTL {
	if last := b.lastTTL.Load(); last != nil && last.ttl == ttl {
		return last
	}
	args := &scriptTTL{ttl: ttl, ms: ttl.Milliseconds(), fenceCounterMs: fenceCounterTTL(ttl)}
	b.lastTTL.Store(args)
	return args
}

// acquireCall lays out a call of acquire.lua or unseal.lua, which take the
// same keys and arguments.
func (b *Backend) acquireCall(s *script, key, token string, ttl time.Duration, deadline int64) *scriptCall {
	args := b.ttlArgs(ttl)
	c := newCall(s)
	c.key(storageKey(key))
	c.key(FenceKey(key))
	c.str(token)
	c.arg(args.ms)
	c.arg(args.fenceCounterMs)
	c.int(deadline)
	return c
}

// Extend implements backend.Backend.
func (b *Backend) Extend(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	c := newCall(extendScript)
	c.key(storageKey(key))
	c.str(token)
	c.arg(b.ttlArgs(ttl).ms)
	n, err := b.call(ctx, c).Int64()
	if err != nil {
		return false, classify("extend", err)
	}
	return n == 1, nil
}

// Release implements backend.Backend.
func (b *Backend) Release(ctx context.Context, key, token string) (bool, error) {
	c := newCall(releaseScript)
	c.key(storageKey(key))
	c.str(token)
	n, err := b.call(ctx, c).Int64()
	if err != nil {
		return false, classify("release", err)
	}
	return n == 1, nil
}

// Subscribe implements backend.Backend.
func (b *Backend) Subscribe(ctx context.Context, key string) (backend.Subscription, error) {
	s, err := b.notifier.subscribe(ctx, releaseChannel(key))
	if err != nil {
		return nil, classify("subscribe", err)
	}
	return s, nil
}

// classify wraps transport failures and "server cannot serve now" replies
// with backend.ErrUnavailable; other server replies stay plain errors.
func classify(op string, err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("redislock: %s: %w", op, err)
	}
	var reply redis.Error
	if errors.As(err, &reply) && !isTransient(err) {
		return fmt.Errorf("redislock: %s: %w", op, err)
	}
	return fmt.Errorf("redislock: %s: %w: %w", op, backend.ErrUnavailable, err)
}

// uncertain marks the error of an acquire sent with a deadline: the store
// took the lock by by or never (backend.UncertainError). Without a
// deadline (by zero) the error stays as it is.
func uncertain(err error, by time.Time) error {
	if by.IsZero() {
		return err
	}
	return &backend.UncertainError{Err: err, By: by}
}

// pastDeadline is the answer of an acquire script that Redis ran after its
// caller's deadline: this run took nothing (an earlier run of the same
// call, whose reply was lost before go-redis retried it, may have: so it
// is still reported as uncertain). Its caller has given up (or is
// about to: the deadline is late by the clocks' uncertainty), so it is an
// unavailable store, as a timeout would have been.
func pastDeadline(op string) error {
	return fmt.Errorf("redislock: %s: %w: %w", op, backend.ErrUnavailable, errPastDeadline)
}

func isTransient(err error) bool {
	for _, prefix := range []string{"LOADING", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
