package lock

import (
	"crypto/rand"
	"encoding/hex"
	"unsafe"
)

// tokenLen is the length of an owner token: 16 random bytes from
// crypto/rand, hex encoded. Tokens identify a holder; knowing another
// holder's token is the only way to release its lock, so they must be
// unguessable.
const tokenLen = 32

// mintToken writes a new token into buf and returns it as a string that
// shares buf's memory: a lease keeps its token in its own allocation. buf
// must never change afterwards.
func mintToken(buf *[tokenLen]byte) string {
	var b [tokenLen / 2]byte
	_, _ = rand.Read(b[:])
	hex.Encode(buf[:], b[:])
	return unsafe.String(&buf[0], tokenLen)
}
