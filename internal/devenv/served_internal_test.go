package devenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seatlock/seatlock/internal/auth"
)

// servedDir is a DIR whose env holds a secret, as Start leaves it.
func servedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	e := Env{RedisPort: 1, PGPort: 2, AuthSecret: strings.Repeat("s", auth.MinSecretLen)}
	if err := e.write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// otherOwner is a live process other than this one, as a second make run
// would be.
func otherOwner(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// A claim names its address in served.env and writes tokens for it; a
// second claim while the first owner serves keeps the first's files, and
// the second's release brings them back; the first's release removes them.
func TestClaimAndReleaseStackTheOwners(t *testing.T) {
	dir := servedDir(t)
	t.Setenv("HTTP_ADDR", "")
	if got := ServedAddr(dir); got != DefaultAddr {
		t.Fatalf("nothing served: ServedAddr = %s, want %s", got, DefaultAddr)
	}
	first, second := os.Getpid(), otherOwner(t)
	if err := Claim(dir, "127.0.0.1:9001", "make run", first); err != nil {
		t.Fatal(err)
	}
	if got := ServedAddr(dir); got != "127.0.0.1:9001" {
		t.Fatalf("after make run's claim: ServedAddr = %s", got)
	}
	tokens, err := ReadTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := auth.NewVerifier([]byte(strings.Repeat("s", auth.MinSecretLen)))
	if err != nil {
		t.Fatal(err)
	}
	if tokens["API"] != "http://127.0.0.1:9001" {
		t.Errorf("tokens.env API = %q", tokens["API"])
	}
	for _, want := range DevelopmentTokens {
		if _, err := verifier.Verify(tokens[want.Name]); err != nil {
			t.Errorf("tokens.env %s: %v", want.Name, err)
		}
	}

	if err := Claim(dir, "127.0.0.1:9002", "make cluster", second); err != nil {
		t.Fatal(err)
	}
	if got := ServedAddr(dir); got != "127.0.0.1:9002" {
		t.Fatalf("after make cluster's claim: ServedAddr = %s", got)
	}
	Release(dir, second)
	if got := ServedAddr(dir); got != "127.0.0.1:9001" {
		t.Fatalf("after make cluster's release: ServedAddr = %s, want make run's again", got)
	}
	if tokens, _ := ReadTokens(dir); tokens["API"] != "http://127.0.0.1:9001" {
		t.Errorf("after make cluster's release: tokens.env API = %q", tokens["API"])
	}
	Release(dir, first)
	for _, name := range []string{"served.env", "tokens.env"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("after the last release, %s: %v (want it gone)", name, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.env.*")); len(left) > 0 {
		t.Errorf("after the last release: %v left", left)
	}
}

// A served.env whose owner was killed before it could release names no
// address; HTTP_ADDR wins over any.
func TestServedAddrOfAGoneOwnerAndOfHTTPAddr(t *testing.T) {
	dir := servedDir(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := Claim(dir, "127.0.0.1:9003", "make run", cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HTTP_ADDR", "")
	if got := ServedAddr(dir); got != DefaultAddr {
		t.Errorf("owner gone: ServedAddr = %s, want %s", got, DefaultAddr)
	}
	t.Setenv("HTTP_ADDR", "127.0.0.1:9999")
	if got := ServedAddr(dir); got != "127.0.0.1:9999" {
		t.Errorf("HTTP_ADDR set: ServedAddr = %s", got)
	}
}

// A claim without DIR/env (no servers started) fails and writes nothing.
func TestClaimWithoutServers(t *testing.T) {
	dir := t.TempDir()
	if err := Claim(dir, "127.0.0.1:9004", "make run", os.Getpid()); err == nil {
		t.Fatal("claimed without DIR/env")
	}
	if _, err := os.Stat(filepath.Join(dir, "served.env")); !os.IsNotExist(err) {
		t.Errorf("served.env after a failed claim: %v", err)
	}
}
