package auth

import (
	"errors"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// A verified token is remembered until it expires (plus the leeway), and
// only a token that passed the full check is.
func TestVerifierRemembersVerifiedTokensUntilTheyExpire(t *testing.T) {
	v, err := NewVerifier(testKey)
	if err != nil {
		t.Fatal(err)
	}
	token, err := Mint(testKey, "alice", "", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(token); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	now := time.Now()
	if p, ok := v.verified.get(token, now); !ok || p.UserID != "alice" {
		t.Fatalf("cache after Verify = %+v, %v; want alice", p, ok)
	}
	if _, ok := v.verified.get(token, now.Add(time.Minute+leeway+time.Second)); ok {
		t.Error("token still remembered after its expiry and the leeway")
	}
	if _, ok := v.verified.get(token, now); ok {
		t.Error("an expired entry must be forgotten, not kept for later")
	}

	tampered := token[:len(token)-2] + "xx"
	if _, err := v.Verify(tampered); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("tampered token after the genuine one was verified: %v, want ErrInvalidToken", err)
	}
	if _, ok := v.verified.get(tampered, now); ok {
		t.Error("a refused token was remembered")
	}
}

// The cache is bounded.
func TestVerifiedCacheIsBounded(t *testing.T) {
	c := newVerifiedCache(2)
	until := time.Now().Add(time.Hour)
	for _, tok := range []string{"a", "b", "c"} {
		c.add(tok, Principal{UserID: tok}, until)
	}
	if n := c.lru.Len(); n != 2 {
		t.Errorf("entries = %d, want the bound 2", n)
	}
	if _, ok := c.get("a", time.Now()); ok {
		t.Error("least recently used entry still there")
	}
}
