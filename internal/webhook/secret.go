package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// SecretPrefix starts every secret's text, as the specification asks, so
// that a leaked one is recognised by secret scanners.
const SecretPrefix = "whsec_"

// secretLen is the size of the keys NewSecret makes; minSecretLen and
// maxSecretLen bound those ParseSecret accepts, the specification's range
// (its own test vector has a 24-byte key).
const (
	secretLen    = 32
	minSecretLen = 24
	maxSecretLen = 64
)

// redacted stands for a secret wherever one would be printed or logged.
const redacted = SecretPrefix + "REDACTED"

// ErrMalformedSecret reports a secret's text that is not SecretPrefix
// followed by the standard base64 of 24 to 64 bytes.
var ErrMalformedSecret = errors.New("webhook: malformed secret")

// Secret is an endpoint's signing key. It never prints itself: String,
// GoString, LogValue and every fmt verb show "whsec_REDACTED"; Reveal
// gives its text, to be shown to the endpoint's owner once and sealed
// for storage (Sealer). The zero Secret is no key: Sign refuses it.
type Secret struct {
	// key is a *string so that fmt, printing a struct that holds a
	// Secret in an unexported field (where it cannot call Format), shows
	// an address, not the key: fmt prints what a pointer to a slice,
	// array, map or struct holds, but not a pointer to a string.
	key *string
}

// NewSecret makes a secret of 32 random bytes.
func NewSecret() Secret {
	key := make([]byte, secretLen)
	_, _ = rand.Read(key) // never fails (crypto/rand, Go 1.24+)
	return secretOf(key)
}

// ParseSecret reads a secret's text, "whsec_" and the standard base64 of
// its key; it returns ErrMalformedSecret, which never quotes the text.
func ParseSecret(text string) (Secret, error) {
	encoded, ok := strings.CutPrefix(text, SecretPrefix)
	if !ok {
		return Secret{}, fmt.Errorf("%w: no %q prefix", ErrMalformedSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.Strict().DecodeString(encoded)
	// Encoded back, to refuse the line breaks the decoder skips.
	if err != nil || base64.StdEncoding.EncodeToString(key) != encoded {
		return Secret{}, fmt.Errorf("%w: not standard base64", ErrMalformedSecret)
	}
	if len(key) < minSecretLen || len(key) > maxSecretLen {
		return Secret{}, fmt.Errorf("%w: key of %d bytes, want %d to %d", ErrMalformedSecret, len(key), minSecretLen, maxSecretLen)
	}
	return secretOf(key), nil
}

func secretOf(key []byte) Secret {
	k := string(key)
	return Secret{key: &k}
}

// bytes returns the key, nil for the zero Secret.
func (s Secret) bytes() []byte {
	if s.key == nil {
		return nil
	}
	return []byte(*s.key)
}

// Reveal returns the secret's text, "whsec_" and the base64 of its key,
// which ParseSecret reads back. Only for the endpoint's owner and Sealer.
func (s Secret) Reveal() string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(s.bytes())
}

// IsZero reports whether s holds no key.
func (s Secret) IsZero() bool { return len(s.bytes()) == 0 }

// String redacts the secret.
func (s Secret) String() string { return redacted }

// GoString redacts the secret (%#v).
func (s Secret) GoString() string { return redacted }

// LogValue redacts the secret in slog records.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Format redacts the secret under every fmt verb, %d and %x included.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

var (
	_ fmt.Stringer   = Secret{}
	_ fmt.GoStringer = Secret{}
	_ fmt.Formatter  = Secret{}
	_ slog.LogValuer = Secret{}
)
