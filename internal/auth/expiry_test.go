package auth_test

import (
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatlock/seatlock/internal/auth"
)

func signed(t *testing.T, method jwt.SigningMethod, key []byte, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Only a token that passed every other check is said to be expired; the
// rest are invalid, whatever else is wrong with them.
func TestVerifyTellsExpiredFromInvalid(t *testing.T) {
	v, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	past, future := time.Now().Add(-time.Minute).Unix(), time.Now().Add(time.Hour).Unix()
	expired := map[string]string{
		"expired": signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": past}),
	}
	invalid := map[string]string{
		"expired, wrong key": signed(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"),
			jwt.MapClaims{"sub": "alice", "exp": past}),
		"expired, HS512":      signed(t, jwt.SigningMethodHS512, secret, jwt.MapClaims{"sub": "alice", "exp": past}),
		"expired, no sub":     signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"exp": past}),
		"expired, NUL in sub": signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "al\x00ice", "exp": past}),
		"expired, not before": signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": past, "nbf": future}),
		"NUL in sub":          signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "al\x00ice", "exp": future}),
		"newline in sub":      signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice\nbob", "exp": future}),
		"C1 control in sub":   signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice\u0085", "exp": future}),
		"DEL in sub":          signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice\x7f", "exp": future}),
	}
	for name, token := range expired {
		if _, err := v.Verify(token); !errors.Is(err, auth.ErrExpiredToken) || !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("%s: Verify = %v, want ErrExpiredToken (an ErrInvalidToken)", name, err)
		}
	}
	for name, token := range invalid {
		_, err := v.Verify(token)
		if !errors.Is(err, auth.ErrInvalidToken) || errors.Is(err, auth.ErrExpiredToken) {
			t.Errorf("%s: Verify = %v, want ErrInvalidToken and not ErrExpiredToken", name, err)
		}
	}
}

func TestMintRefusesControlCharacters(t *testing.T) {
	for _, user := range []string{"al\x00ice", "alice\n", "\x1b[31m", "alice\xff"} {
		if _, err := auth.Mint(secret, user, "", time.Hour); err == nil {
			t.Errorf("Mint(%q) succeeded, want an error", user)
		}
	}
}

// The documented leeway (docs/api.md, the OpenAPI document's
// Authentication): a token is accepted until 5 s after its exp, refused as
// expired after that.
func TestExpiryLeewayIsFiveSeconds(t *testing.T) {
	v, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	within := signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": now.Add(-3 * time.Second).Unix()})
	if _, err := v.Verify(within); err != nil {
		t.Errorf("a token 3 s past its exp: %v, want it accepted (5 s leeway)", err)
	}
	past := signed(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": now.Add(-7 * time.Second).Unix()})
	if _, err := v.Verify(past); !errors.Is(err, auth.ErrExpiredToken) {
		t.Errorf("a token 7 s past its exp: %v, want ErrExpiredToken", err)
	}
}
