package webhook

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
)

// sealInfo labels the key Sealer derives from AUTH_SECRET, so that it is
// unrelated to the token-signing key taken from the same secret; a new
// label (v2) would make a new key.
const sealInfo = "seatlock webhook secrets v1"

// MinAuthSecretLen is the shortest AUTH_SECRET NewSealer accepts, in bytes
// (internal/config already demands as much of it).
const MinAuthSecretLen = 32

var (
	// ErrShortAuthSecret reports an AUTH_SECRET below MinAuthSecretLen.
	ErrShortAuthSecret = fmt.Errorf("webhook: AUTH_SECRET must be at least %d bytes", MinAuthSecretLen)
	// ErrUnseal reports sealed bytes that Open cannot open: altered,
	// truncated, sealed under another AUTH_SECRET, or not sealed at all.
	ErrUnseal = errors.New("webhook: cannot open sealed secret")
)

// Sealer encrypts secrets for storage with AES-256-GCM under a key derived
// from AUTH_SECRET by HKDF-SHA256: a copy of the database alone reveals no
// secret. It is safe for concurrent use.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer derives the sealing key from authSecret; it returns
// ErrShortAuthSecret for one below MinAuthSecretLen bytes.
func NewSealer(authSecret string) (*Sealer, error) {
	if len(authSecret) < MinAuthSecretLen {
		return nil, ErrShortAuthSecret
	}
	key, err := hkdf.Key(sha256.New, []byte(authSecret), nil, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("webhook: derive sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("webhook: sealing cipher: %w", err)
	}
	// A random 96-bit nonce, prepended: one key may seal 2^32 secrets
	// before a nonce collision is a concern, far more than endpoints
	// and rotations will ever make.
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("webhook: sealing cipher: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts s: a random nonce, the ciphertext and its tag, 60 bytes
// for a secret of 32. Two seals of one secret differ. The zero Secret's
// seal does not open.
func (sl *Sealer) Seal(s Secret) []byte {
	return sl.aead.Seal(nil, nil, s.bytes(), nil)
}

// Open decrypts what Seal made; it returns ErrUnseal for anything else,
// including bytes sealed under another AUTH_SECRET.
func (sl *Sealer) Open(sealed []byte) (Secret, error) {
	key, err := sl.aead.Open(nil, nil, sealed, nil)
	if err != nil || len(key) < minSecretLen || len(key) > maxSecretLen {
		return Secret{}, ErrUnseal
	}
	return secretOf(key), nil
}
