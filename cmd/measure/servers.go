package main

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// env is a server set's settings, as its env file holds them: REDIS_URL,
// DATABASE_URL, AUTH_SECRET, PG_DIR...
type env map[string]string

// list is env as NAME=VALUE entries, for a process's environment.
func (e env) list() []string {
	out := make([]string, 0, len(e))
	for _, k := range slices.Sorted(maps.Keys(e)) {
		out = append(out, k+"="+e[k])
	}
	return out
}

// runDir is where `make run`'s servers keep their data: RUN_DIR, or
// .data/run under the repository's root.
func runDir(root string) string { return setting("RUN_DIR", filepath.Join(root, ".data", "run")) }

// runServers starts `make run`'s Redis and PostgreSQL if they do not run
// yet, and returns their settings (DIR/env).
func runServers(root string) (env, error) {
	dir := runDir(root)
	if err := devenvScript(root, "start", dir); err != nil {
		return nil, err
	}
	return readEnv(filepath.Join(dir, "env"))
}

// pgPair starts make cluster's PostgreSQL pair (a leader and its
// synchronous standby under Patroni) beside the servers of dir if it does
// not run yet, and returns its settings (DIR/pgha/env).
func pgPair(root, dir string) (env, error) {
	if err := devenvScript(root, "patroni", dir); err != nil {
		return nil, err
	}
	return readEnv(filepath.Join(dir, "pgha", "env"))
}

// devenvScript runs `devenv.sh SUB DIR`, its messages on stderr.
func devenvScript(root, sub, dir string) error {
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "devenv.sh"), sub, dir)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("devenv.sh %s %s: %w", sub, dir, err)
	}
	return nil
}

// readEnv reads an env file: NAME=VALUE lines, the value maybe quoted.
func readEnv(path string) (env, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	e := env{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		e[strings.TrimPrefix(name, "export ")] = value
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return e, nil
}

// running are the processes a run started, stopped when it ends.
type running []*lockenv.Process

func (r *running) add(p *lockenv.Process) { *r = append(*r, p) }

// stop asks each to end, the last started first.
func (r running) stop() {
	for _, p := range slices.Backward(r) {
		_ = p.Stop(10 * time.Second)
	}
}

// launch starts bin with args as name, its output in logPath (made anew),
// for a server that is not the service's HTTP (the span sink).
func launch(name, logPath string, bin string, args ...string) (*lockenv.Process, error) {
	_ = os.Remove(logPath)
	return lockenv.Launch(name, logPath, syscall.SIGTERM, nil, exec.Command(bin, args...))
}
