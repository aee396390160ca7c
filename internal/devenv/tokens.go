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

// WriteTokens writes path as shell assignments a second terminal can
// source: API (url) and a 24-hour token of each of DevelopmentTokens,
// signed with secret, readable by the owner only.
func WriteTokens(path, secret, url string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "API=%s\n", url)
	for _, t := range DevelopmentTokens {
		token, err := auth.Mint([]byte(secret), t.User, t.Role, 24*time.Hour)
		if err != nil {
			return fmt.Errorf("mint %s's token: %w", t.User, err)
		}
		fmt.Fprintf(&b, "%s=%s\n", t.Name, token)
	}
	return writeAtomically(path, b.String(), 0o600)
}
