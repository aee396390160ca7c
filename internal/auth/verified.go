package auth

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultVerifiedTokens is how many verified tokens a Verifier remembers:
// a few hundred bytes each.
const DefaultVerifiedTokens = 10_000

// verifiedCache remembers tokens whose signature and claims were checked,
// until they expire (with the verifier's leeway). A token is only ever
// added after a full check, so nothing a client invents gets in: a forged
// or tampered token is a different string and is checked in full. Bounded,
// least recently used first out.
type verifiedCache struct {
	lru *lru.Cache[string, verifiedToken]
}

type verifiedToken struct {
	principal Principal
	until     time.Time
}

func newVerifiedCache(size int) *verifiedCache {
	c, err := lru.New[string, verifiedToken](size)
	if err != nil {
		// Only a size below 1 fails; the size is a constant.
		panic(err)
	}
	return &verifiedCache{lru: c}
}

// get returns the principal of a remembered token that is still valid at
// now; an expired one is forgotten.
func (c *verifiedCache) get(token string, now time.Time) (Principal, bool) {
	v, ok := c.lru.Get(token)
	if !ok {
		return Principal{}, false
	}
	if !now.Before(v.until) {
		c.lru.Remove(token)
		return Principal{}, false
	}
	return v.principal, true
}

func (c *verifiedCache) add(token string, p Principal, until time.Time) {
	c.lru.Add(token, verifiedToken{principal: p, until: until})
}
