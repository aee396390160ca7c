// Package auth mints and verifies the service's bearer tokens: JWTs signed
// with HS256 under AUTH_SECRET, carrying `sub` (the user id), `exp` and an
// optional `role`.
package auth

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// RoleAdmin may create schedules.
const RoleAdmin = "admin"

// MinSecretLen is the shortest accepted HS256 key, in bytes.
const MinSecretLen = 32

// maxSubjectLen bounds the user id we accept and store.
const maxSubjectLen = 255

// leeway absorbs small clock differences between the token's minter and us.
const leeway = 5 * time.Second

var (
	// ErrInvalidToken reports a missing, malformed, expired or wrongly
	// signed token, or one without the required claims.
	ErrInvalidToken = errors.New("auth: invalid token")
	// ErrExpiredToken reports a token that is valid in every way but its
	// expiry: the client needs a new one. It wraps ErrInvalidToken.
	ErrExpiredToken = fmt.Errorf("%w: expired", ErrInvalidToken)
	// ErrShortSecret reports an AUTH_SECRET below MinSecretLen bytes.
	ErrShortSecret = fmt.Errorf("auth: secret must be at least %d bytes", MinSecretLen)
)

// Principal is the authenticated caller.
type Principal struct {
	UserID string
	Role   string
}

// IsAdmin reports whether the caller may administer schedules.
func (p Principal) IsAdmin() bool { return p.Role == RoleAdmin }

type claims struct {
	Role string `json:"role,omitempty"`
	jwt.RegisteredClaims
}

// Mint signs a token for userID that expires after ttl. role may be empty.
func Mint(secret []byte, userID, role string, ttl time.Duration) (string, error) {
	if len(secret) < MinSecretLen {
		return "", ErrShortSecret
	}
	if !validSubject(userID) {
		return "", fmt.Errorf("auth: user id must be 1..%d bytes of UTF-8 without control characters", maxSubjectLen)
	}
	if ttl <= 0 {
		return "", errors.New("auth: ttl must be positive")
	}
	now := time.Now()
	token := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{
		Role: role,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
	})
	return token.SignedString(secret)
}

// Verifier checks tokens against one secret. It remembers the tokens it
// verified (see verifiedCache), so a client that sends the same token on
// every request pays for one signature check per token, not per request.
type Verifier struct {
	secret   []byte
	parser   *jwt.Parser
	verified *verifiedCache
}

// NewVerifier returns a Verifier for secret, or ErrShortSecret.
func NewVerifier(secret []byte) (*Verifier, error) {
	if len(secret) < MinSecretLen {
		return nil, ErrShortSecret
	}
	return &Verifier{
		secret: secret,
		// Pinning the algorithm refuses "none" and any algorithm
		// confusion; exp is mandatory.
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(leeway),
		),
		verified: newVerifiedCache(DefaultVerifiedTokens),
	}, nil
}

// Verify returns the caller named by token, or an error wrapping
// ErrInvalidToken (ErrExpiredToken when the token is well formed and
// correctly signed but expired: only a token that passed the signature
// check is said to be expired).
func (v *Verifier) Verify(token string) (Principal, error) {
	if p, ok := v.verified.get(token, time.Now()); ok {
		return p, nil
	}
	var c claims
	_, err := v.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return v.secret, nil })
	switch {
	case err != nil && onlyExpired(err) && validSubject(c.Subject):
		return Principal{}, fmt.Errorf("%w: %w", ErrExpiredToken, err)
	case err != nil:
		return Principal{}, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	case !validSubject(c.Subject):
		return Principal{}, fmt.Errorf("%w: sub missing, too long, not UTF-8 or with control characters", ErrInvalidToken)
	}
	p := Principal{UserID: c.Subject, Role: c.Role}
	v.verified.add(token, p, c.ExpiresAt.Add(leeway))
	return p, nil
}

// onlyExpired reports a parse error that is the expiry alone: the claims
// were checked (so the signature passed) and no other claim failed.
func onlyExpired(err error) bool {
	return errors.Is(err, jwt.ErrTokenInvalidClaims) && errors.Is(err, jwt.ErrTokenExpired) &&
		!errors.Is(err, jwt.ErrTokenNotValidYet) && !errors.Is(err, jwt.ErrTokenUsedBeforeIssued)
}

// validSubject reports whether sub can be a user id: 1..maxSubjectLen
// bytes of UTF-8 without control characters. A user id is stored as text
// (PostgreSQL refuses NUL) and shown to its owner; a token that names
// anything else names no user.
func validSubject(sub string) bool {
	return sub != "" && len(sub) <= maxSubjectLen && utf8.ValidString(sub) && !strings.ContainsFunc(sub, unicode.IsControl)
}
