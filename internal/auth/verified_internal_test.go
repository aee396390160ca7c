package auth

import (
	"errors"
	"fmt"
	"sync"
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

// The cache is bounded, whatever the number of tokens seen, and a token
// just added is remembered.
func TestVerifiedCacheIsBounded(t *testing.T) {
	for _, size := range []int{1, 2, 100, DefaultVerifiedTokens} {
		c := newVerifiedCache(size)
		until := time.Now().Add(time.Hour)
		for i := range 3 * size {
			tok := fmt.Sprintf("token-%d", i)
			c.add(tok, Principal{UserID: tok}, until)
			if p, ok := c.get(tok, time.Now()); !ok || p.UserID != tok {
				t.Fatalf("size %d: token %q just added: %+v, %v", size, tok, p, ok)
			}
		}
		if n := c.len(); n > size || n < size/2 {
			t.Errorf("size %d: %d entries after %d tokens, want at most the bound and most of it used", size, n, 3*size)
		}
	}
}

// Each remembered token answers with its own principal, with many
// goroutines adding and asking at once (run with -race).
func TestVerifiedCacheKeepsTokensApart(t *testing.T) {
	c := newVerifiedCache(1_000)
	until := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2_000 {
				tok := fmt.Sprintf("token-%d-%d", g, i)
				c.add(tok, Principal{UserID: tok}, until)
				for _, back := range []int{i, i / 2} {
					want := fmt.Sprintf("token-%d-%d", g, back)
					if p, ok := c.get(want, time.Now()); ok && p.UserID != want {
						t.Errorf("token %q answered as %q", want, p.UserID)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if n := c.len(); n > 1_000 {
		t.Errorf("%d entries, want at most 1000", n)
	}
}

// A remembered token costs no allocation: it is checked on every request.
func TestRememberedTokenVerifiesWithoutAllocating(t *testing.T) {
	v, err := NewVerifier(testKey)
	if err != nil {
		t.Fatal(err)
	}
	token, err := Mint(testKey, "alice", RoleAdmin, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(token); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if p, err := v.Verify(token); err != nil || !p.IsAdmin() {
			t.Fatalf("Verify = %+v, %v", p, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per verification of a remembered token, want 0", allocs)
	}
}

// BenchmarkVerifyRemembered is the cost of authenticating a request whose
// token was seen before: the common case, paid on every request.
func BenchmarkVerifyRemembered(b *testing.B) {
	v, err := NewVerifier(testKey)
	if err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, 2_000)
	for i := range tokens {
		if tokens[i], err = Mint(testKey, fmt.Sprintf("user-%d", i), "", time.Hour); err != nil {
			b.Fatal(err)
		}
		if _, err := v.Verify(tokens[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := v.Verify(tokens[i%len(tokens)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
