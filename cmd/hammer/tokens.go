package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
)

// newRunID names one run; user ids embed it so two runs never share a user.
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// userID is the distinct user behind request i.
func userID(runID string, i int) string { return fmt.Sprintf("hammer-%s-%d", runID, i) }

// mintUsers mints one token per request before the clock starts, so signing
// is not part of the measured latency.
func mintUsers(secret []byte, runID string, n int, ttl time.Duration) (users, tokens []string, err error) {
	users = make([]string, n)
	tokens = make([]string, n)
	for i := range n {
		users[i] = userID(runID, i)
		if tokens[i], err = auth.Mint(secret, users[i], "", ttl); err != nil {
			return nil, nil, fmt.Errorf("mint token: %w", err)
		}
	}
	return users, tokens, nil
}

// tokenTTL outlives the longest possible run: setup, every round of requests
// timing out, and verification against every target.
func tokenTTL(cfg config) time.Duration {
	rounds := (cfg.N+cfg.C-1)/cfg.C + len(cfg.Targets) + 3
	const maxTTL = 30 * 24 * time.Hour
	if cfg.Timeout > maxTTL/time.Duration(rounds) {
		return maxTTL
	}
	return time.Hour + time.Duration(rounds)*cfg.Timeout
}
