package backend

import (
	"crypto/rand"
	"encoding/hex"
)

// NewToken returns a random owner token like the ones lock.Client mints for
// each acquisition: 128 bits from crypto/rand, hex encoded. Adapter tests
// use it to act as holders of their own.
func NewToken() string {
	var b [16]byte
	// crypto/rand.Read never returns an error on supported platforms (it
	// panics instead since Go 1.24), so there is nothing to handle here.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
