package lock

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/seatlock/seatlock/internal/lock/backend"
)

// SealMemory is how long a Client with Config.RememberSeals answers
// ErrSealed for a key from memory after the store last said it was sealed
// (or after the Client sealed it), and how long an Acquire with
// Options.Unseal that lifted a seal waits before it hands out the lease.
// The two are one constant so that, for every Client sharing a store, a
// seal lifted under the lock is forgotten everywhere before the lease's
// holder can change what the seal stood for: a remembered seal never
// refuses a key whose seal was lifted before the request began.
const SealMemory = 250 * time.Millisecond

// sealMemorySize bounds how many sealed keys a Client remembers. A key is
// worth remembering for SealMemory only, and an instance seals at most a
// few thousand keys a second, so 4096 cover well over SealMemory's
// worth; a key pushed out early costs one store call. Expired keys leave
// only when pushed out, so a larger memory keeps megabytes of them after a
// long run of fresh seals.
const sealMemorySize = 1 << 12

// sealMemory remembers sealed keys with their seal's note, each until the
// instant its memory expires. The instant counts from before the store
// call that saw or made the seal, so it never outlasts SealMemory after the
// seal was in place.
type sealMemory struct {
	seals *lru.Cache[string, rememberedSeal]
}

// rememberedSeal is what an Acquire answered from memory needs: until when
// to answer, and the error the store's answer would have made, made once:
// a key asked for again and again is refused from memory every time.
type rememberedSeal struct {
	until time.Time
	err   *SealedError
}

func newSealMemory() *sealMemory {
	c, err := lru.New[string, rememberedSeal](sealMemorySize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &sealMemory{seals: c}
}

// sealed returns the error of key's seal if key is remembered sealed at
// now, and nil if not.
func (m *sealMemory) sealed(key string, now time.Time) *SealedError {
	seal, ok := m.seals.Get(key)
	if !ok {
		return nil
	}
	if !now.Before(seal.until) {
		m.seals.Remove(key)
		return nil
	}
	return seal.err
}

// remember notes that the store had key sealed with note at asked (or
// later).
func (m *sealMemory) remember(key, note string, asked time.Time) {
	m.seals.Add(key, rememberedSeal{until: asked.Add(SealMemory), err: &SealedError{Key: key, Note: note}})
}

func (m *sealMemory) forget(key string) { m.seals.Remove(key) }

// canSeal reports whether the Client's backend seals (a backend that
// cannot releases instead, and there is nothing to remember).
func (c *Client) canSeal() bool {
	_, ok := c.backend.(backend.Sealer)
	return ok
}
