package lock

import (
	"crypto/rand"
	"encoding/hex"
)

// NewToken returns a random owner token: 128 bits from crypto/rand, hex
// encoded. Tokens identify a holder; knowing another holder's token is the
// only way to release its lock, so they must be unguessable.
func NewToken() string {
	var b [16]byte
	// crypto/rand.Read never returns an error on supported platforms (it
	// panics instead since Go 1.24), so there is nothing to handle here.
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
