package idempotency_test

import (
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/idempotency"
)

// FuzzValidKey checks that a key is valid exactly when it is 1 to
// MaxKeyLen visible ASCII characters, whatever bytes it holds.
func FuzzValidKey(f *testing.F) {
	for _, key := range []string{"a", "9b2f6c0e-1d4a-4c8e-a3f7-5e6d7c8b9a01", "", " ", "a b", "nul\x00", "del\x7f", "ü",
		strings.Repeat("k", idempotency.MaxKeyLen), strings.Repeat("k", idempotency.MaxKeyLen+1)} {
		f.Add(key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		visible := len(key) >= 1 && len(key) <= idempotency.MaxKeyLen &&
			!strings.ContainsFunc(key, func(r rune) bool { return r < '!' || r > '~' })
		if got := idempotency.ValidKey(key); got != visible {
			t.Fatalf("ValidKey(%q) = %v, want %v", key, got, visible)
		}
	})
}
