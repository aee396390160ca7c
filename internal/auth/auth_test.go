package auth_test

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatlock/seatlock/internal/auth"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

func TestMintThenVerify(t *testing.T) {
	v, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	token, err := auth.Mint(secret, "alice", auth.RoleAdmin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(token)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if p.UserID != "alice" || !p.IsAdmin() {
		t.Errorf("principal = %+v, want alice admin", p)
	}
}

func TestVerifyRejects(t *testing.T) {
	v, err := auth.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(method jwt.SigningMethod, key any, c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(method, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	future := time.Now().Add(time.Hour).Unix()
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice","exp":`+strconv.FormatInt(future, 10)+`}`)) + "."
	tests := map[string]string{
		"empty":      "",
		"garbage":    "not-a-jwt",
		"expired":    sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Minute).Unix()}),
		"no exp":     sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice"}),
		"no sub":     sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"exp": future}),
		"long sub":   sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": strings.Repeat("a", 256), "exp": future}),
		"wrong key":  sign(jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), jwt.MapClaims{"sub": "alice", "exp": future}),
		"HS512":      sign(jwt.SigningMethodHS512, secret, jwt.MapClaims{"sub": "alice", "exp": future}),
		"alg none":   none,
		"tampered":   sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": future}) + "x",
		"not before": sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "alice", "exp": future, "nbf": future}),
	}
	for name, token := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := v.Verify(token); !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("Verify(%s) = %v, want ErrInvalidToken", name, err)
			}
		})
	}
}

func TestShortSecretRefused(t *testing.T) {
	if _, err := auth.NewVerifier([]byte("short")); !errors.Is(err, auth.ErrShortSecret) {
		t.Errorf("NewVerifier: got %v, want ErrShortSecret", err)
	}
	if _, err := auth.Mint([]byte("short"), "alice", "", time.Hour); !errors.Is(err, auth.ErrShortSecret) {
		t.Errorf("Mint: got %v, want ErrShortSecret", err)
	}
}
