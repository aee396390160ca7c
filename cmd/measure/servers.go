package main

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// env is a server set's settings: REDIS_URL, DATABASE_URL, AUTH_SECRET,
// and PG_DIR (where PostgreSQL keeps its data, for its pid).
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

// onRunServers is how every measuring run starts: make run's Redis and
// PostgreSQL (started if need be), the service and the hammer built into
// bin/, and the run's own folder, .data/NAME; it returns the servers'
// settings and that folder.
func onRunServers(ctx context.Context, root, name string) (env, string, error) {
	servers, err := runServers(root)
	if err != nil {
		return nil, "", err
	}
	if err := buildBinaries(ctx, root); err != nil {
		return nil, "", err
	}
	work := filepath.Join(root, ".data", name)
	return servers, work, os.MkdirAll(work, 0o755)
}

// runServers starts `make run`'s Redis and PostgreSQL if they do not run
// yet, and returns their settings (DIR/env).
func runServers(root string) (env, error) {
	e, err := devenv.Start(runDir(root))
	if err != nil {
		return nil, err
	}
	return env{"REDIS_URL": e.RedisURL, "DATABASE_URL": e.DatabaseURL, "AUTH_SECRET": e.AuthSecret, "PG_DIR": e.PGDir}, nil
}

// pgPair starts make cluster's PostgreSQL pair (a leader and its
// synchronous standby under Patroni) beside the servers of dir if it does
// not run yet, and returns the service's DATABASE_URL for it (both
// nodes, target_session_attrs=read-write).
func pgPair(dir string) (string, error) {
	pair, err := devenv.Patroni(dir, os.Stderr)
	if err != nil {
		return "", err
	}
	return pair.DatabaseURL, nil
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
