package lock

import (
	"crypto/rand"
	"encoding/hex"
	"unsafe"
)

// tokenLen is the length of a token: 16 random bytes, hex encoded.
const tokenLen = 32

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

// mintToken writes a new token into buf and returns it as a string that
// shares buf's memory: a lease keeps its token in its own allocation. buf
// must never change afterwards.
func mintToken(buf *[tokenLen]byte) string {
	var b [tokenLen / 2]byte
	_, _ = rand.Read(b[:])
	hex.Encode(buf[:], b[:])
	return unsafe.String(&buf[0], tokenLen)
}
