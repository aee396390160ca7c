package devenv

import (
	"fmt"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// DevelopmentTokens are the users make run mints tokens for: an admin,
// and two users for trying one booking against another.
var DevelopmentTokens = []struct{ Name, User, Role string }{
	{"ADMIN", "admin", "admin"},
	{"ALICE", "alice", ""},
	{"BOB", "bob", ""},
}

// MintDevelopmentTokens signs a token of each of DevelopmentTokens with
// secret, valid for ttl, by its Name.
func MintDevelopmentTokens(secret string, ttl time.Duration) (map[string]string, error) {
	tokens := make(map[string]string, len(DevelopmentTokens))
	for _, t := range DevelopmentTokens {
		token, err := auth.Mint([]byte(secret), t.User, t.Role, ttl)
		if err != nil {
			return nil, fmt.Errorf("mint %s's token: %w", t.User, err)
		}
		tokens[t.Name] = token
	}
	return tokens, nil
}

// WriteTokens writes path as shell assignments a second terminal can
// source: API (url) and a 24-hour token of each of DevelopmentTokens,
// signed with secret, readable by the owner only.
func WriteTokens(path, secret, url string) error {
	tokens, err := MintDevelopmentTokens(secret, 24*time.Hour)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "API=%s\n", url)
	for _, t := range DevelopmentTokens {
		fmt.Fprintf(&b, "%s=%s\n", t.Name, tokens[t.Name])
	}
	return writeAtomically(path, b.String(), 0o600)
}
