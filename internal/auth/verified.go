package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// DefaultVerifiedTokens is how many verified tokens a Verifier remembers:
// about a hundred bytes each.
const DefaultVerifiedTokens = 10_000

// verifiedShards spreads the remembered tokens over locks of their own, so
// that concurrent requests seldom wait for one another.
const verifiedShards = 16

// verifiedCache remembers tokens whose signature and claims were checked,
// until they expire (with the verifier's leeway). A token is only ever
// added after a full check, so nothing a client invents gets in: a forged
// or tampered token is a different string, with a different digest, and is
// checked in full.
//
// Tokens are remembered by their digest, not their text: a token is some
// 150 bytes, and keeping it would keep the request header it came in.
// Finding another token with the same 128-bit SHA-256 prefix is out of
// reach. Bounded: when a shard is full, an entry of it chosen at random
// makes room (a token used again is checked again, once).
type verifiedCache struct {
	shards []verifiedShard
	limit  int // per shard
}

type verifiedShard struct {
	mu     sync.RWMutex
	tokens map[tokenDigest]verifiedToken
}

type tokenDigest [16]byte

type verifiedToken struct {
	principal Principal
	until     int64 // Unix nanoseconds
}

// newVerifiedCache returns a cache of at most size tokens (size ≥ 1).
func newVerifiedCache(size int) *verifiedCache {
	shards := min(size, verifiedShards)
	c := &verifiedCache{shards: make([]verifiedShard, shards), limit: size / shards}
	for i := range c.shards {
		c.shards[i].tokens = make(map[tokenDigest]verifiedToken)
	}
	return c
}

func digestOf(token string) tokenDigest {
	// Copied to the stack: converting the token would allocate its bytes
	// on every request.
	var buf [512]byte
	sum := sha256.Sum256(append(buf[:0], token...))
	return tokenDigest(sum[:16])
}

func (c *verifiedCache) shard(d tokenDigest) *verifiedShard {
	return &c.shards[int(d[0])%len(c.shards)]
}

// get returns the principal of a remembered token that is still valid at
// now; an expired one is forgotten.
func (c *verifiedCache) get(token string, now time.Time) (Principal, bool) {
	d := digestOf(token)
	s := c.shard(d)
	s.mu.RLock()
	v, ok := s.tokens[d]
	s.mu.RUnlock()
	if !ok {
		return Principal{}, false
	}
	if now.UnixNano() >= v.until {
		s.mu.Lock()
		if cur, ok := s.tokens[d]; ok && cur.until == v.until {
			delete(s.tokens, d)
		}
		s.mu.Unlock()
		return Principal{}, false
	}
	return v.principal, true
}

func (c *verifiedCache) add(token string, p Principal, until time.Time) {
	d := digestOf(token)
	s := c.shard(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tokens[d]; !ok && len(s.tokens) >= c.limit {
		// Go starts each walk of a map at a random place: the first entry
		// met is one chosen at random.
		for old := range s.tokens {
			delete(s.tokens, old)
			break
		}
	}
	s.tokens[d] = verifiedToken{principal: p, until: until.UnixNano()}
}

// len is how many tokens are remembered.
func (c *verifiedCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.tokens)
		s.mu.RUnlock()
	}
	return n
}
