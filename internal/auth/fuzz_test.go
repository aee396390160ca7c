package auth_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"github.com/seatlock/seatlock/internal/auth"
)

// FuzzVerify feeds arbitrary tokens to the verifier: it never panics,
// every refusal is an ErrInvalidToken, and whatever it accepts names a
// user id that can be stored and shown.
func FuzzVerify(f *testing.F) {
	future, past := time.Now().Add(24*time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	for _, c := range []jwt.MapClaims{
		{"sub": "alice", "exp": future},
		{"sub": "alice", "exp": future, "role": "admin"},
		{"sub": "al\x00ice", "exp": future},
		{"sub": "alice", "exp": past},
		{"exp": future},
		{"sub": "alice"},
	} {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s)
		f.Add(s[:len(s)-1])
	}
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.")
	v, err := auth.NewVerifier(secret)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.Verify(token)
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("Verify(%q) = %v, not an ErrInvalidToken", token, err)
			}
			return
		}
		if p.UserID == "" || !utf8.ValidString(p.UserID) || strings.ContainsFunc(p.UserID, unicode.IsControl) {
			t.Fatalf("Verify(%q) accepted user id %q", token, p.UserID)
		}
	})
}
