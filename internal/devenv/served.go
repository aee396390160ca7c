package devenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// served runs scripts/served.sh, which records the address `make run` or
// `make cluster` serves on in DIR/served.env, and mints DIR/tokens.env for
// it (from the repository's root): "claim DIR ADDR WHO PID" or "release
// DIR PID".
func served(args ...string) error {
	cmd := exec.Command("bash", append([]string{filepath.Join("scripts", "served.sh")}, args...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/served.sh %s: %w", args[0], err)
	}
	return nil
}

// claimServed records that this process serves DIR's service on addr, as
// who ("make cluster").
func claimServed(dir, addr, who string) error {
	return served("claim", dir, addr, who, strconv.Itoa(os.Getpid()))
}

// releaseServed undoes claimServed: what served before comes back if it
// still does.
func releaseServed(dir string) error {
	return served("release", dir, strconv.Itoa(os.Getpid()))
}

// servedValue returns NAME in DIR/served.env, or "".
func servedValue(dir, name string) string {
	vars, err := readEnvFile(filepath.Join(dir, "served.env"))
	if err != nil {
		return ""
	}
	return vars[name]
}
