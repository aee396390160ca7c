package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// user is one client of the service: an id and its bearer token.
type user struct {
	id    string
	token string
}

// newRunID names one run; user ids embed it so two runs never share a user.
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// userID is the i-th user of a run.
func userID(runID string, i int) string { return fmt.Sprintf("hammer-%s-%d", runID, i) }

// mintUsers mints n users' tokens before the clock starts, so signing is not
// part of the measured latency. Each request goes out as one of them, as
// real clients reuse their token.
func mintUsers(secret []byte, runID string, n int, ttl time.Duration) ([]user, error) {
	users := make([]user, n)
	for i := range users {
		users[i].id = userID(runID, i)
		var err error
		if users[i].token, err = auth.Mint(secret, users[i].id, "", ttl); err != nil {
			return nil, fmt.Errorf("mint token: %w", err)
		}
	}
	return users, nil
}

// tokenTTL outlives the longest possible run: setup, the timed phase with
// every request timing out (best-available: its two phases), and
// verification against every target.
func tokenTTL(cfg config) time.Duration {
	const maxTTL = 30 * 24 * time.Hour
	rounds := len(cfg.Targets) + 3
	if cfg.N > 0 {
		rounds += (cfg.N + cfg.C - 1) / cfg.C
	}
	if cfg.Timeout > maxTTL/time.Duration(rounds) {
		return maxTTL
	}
	timed := cfg.Duration
	if cfg.Scenario == scenarioBestAvailable {
		timed *= 2
		rounds *= 2
	}
	return time.Hour + timed + time.Duration(rounds)*cfg.Timeout
}
