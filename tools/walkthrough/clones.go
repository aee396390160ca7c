package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
)

// walkthrough is one run: its work directory, the two clones in it, and
// the address the first clone's `make run` serves on.
type walkthrough struct {
	repo   string // the repository whose committed HEAD is cloned
	work   string // mode 700: the clones, the logs, the blocks as pasted
	clone  string // where make run serves and the blocks are pasted
	second string // the clone whose make run finds the address taken
	port   int
	addr   string
	run    *makeRun // the clone's make run while it may be running
}

// newWalkthrough makes the work directory, mode 700 as root's home is: a
// place the postgres user cannot enter, which make run must cope with.
func newWalkthrough() (*walkthrough, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return nil, fmt.Errorf("the repository to clone: git rev-parse: %w", err)
	}
	work, err := os.MkdirTemp("", "seatlock-walkthrough.")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(work, 0o700); err != nil {
		return nil, err
	}
	return &walkthrough{
		repo:   strings.TrimSpace(string(out)),
		work:   work,
		clone:  filepath.Join(work, "seatlock"),
		second: filepath.Join(work, "second"),
	}, nil
}

// workFile is the path of a log or a block under the work directory.
func (w *walkthrough) workFile(name string) string { return filepath.Join(w.work, name) }

// cloneInto clones the repository's committed HEAD: what a newcomer gets,
// without the work tree's uncommitted changes or build outputs.
func (w *walkthrough) cloneInto(ctx context.Context, dir string) error {
	cmd := command(ctx, "", nil, "git", "clone", "-q", w.repo, dir)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git clone %s %s: %w", w.repo, dir, err)
	}
	return nil
}

// command is name run in dir with env (nil: the walkthrough's own), in a
// process group of its own: when ctx ends (a signal to the walkthrough),
// the whole group gets SIGTERM, make's children and a block's curls too.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// makeLogged runs make with args in dir, its output (both streams) to the
// file logPath.
func makeLogged(ctx context.Context, dir, logPath string, env []string, args ...string) error {
	out, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = out.Close() }()
	cmd := command(ctx, dir, env, "make", args...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// makeStop is `make -s stop` in dir, its output the walkthrough's.
func makeStop(ctx context.Context, dir string) error {
	cmd := command(ctx, dir, nil, "make", "-s", "stop")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make stop in %s: %w", dir, err)
	}
	return nil
}

// environ is the walkthrough's environment without the variables named in
// drop, with the assignments in set.
func environ(drop []string, set ...string) []string {
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		drop = append(drop, name)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// serversDown: neither the Redis nor the PostgreSQL of dir's make run
// still listens (the one that does is logged).
func serversDown(dir string) bool {
	env, err := devenv.LoadEnv(filepath.Join(dir, ".data", "run"))
	if err != nil {
		return true // it never started any
	}
	for _, port := range []int{env.RedisPort, env.PGPort} {
		if listening(strconv.Itoa(port)) {
			logf("port %d of %s still listens", port, dir)
			return false
		}
	}
	return true
}

// cleanup stops what the walkthrough started and deletes what it made,
// whichever way it ended: make run's session, both clones' servers (make
// stop), a PostgreSQL cluster kept outside its clone (under the postgres
// user's home, since the clone is out of its reach), the work directory.
func (w *walkthrough) cleanup() {
	if w.run != nil {
		w.run.stop()
		w.run = nil
	}
	for _, dir := range []string{w.clone, w.second} {
		if _, err := os.Stat(filepath.Join(dir, ".data", "run", "env")); err != nil {
			continue
		}
		stop := exec.Command("make", "-s", "stop")
		stop.Dir = dir
		_ = stop.Run() // best effort: what it leaves, the checks have reported
		if env, err := devenv.LoadEnv(filepath.Join(dir, ".data", "run")); err == nil && !strings.HasPrefix(env.PGDir, dir+"/") {
			removeAll(env.PGDir)
		}
	}
	removeAll(w.work)
}

func removeAll(path string) {
	if err := os.RemoveAll(path); err != nil {
		logf("%v", err)
	}
}

// failure is the error of a step that failed, once the files that say why
// are shown; after a signal, the failure is the signal's doing, and the
// error is the context's.
func failure(ctx context.Context, files []string, format string, args ...any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	showFiles(files...)
	return fmt.Errorf(format, args...)
}

// showFiles copies files to stderr, for whoever reads why a step failed.
func showFiles(paths ...string) {
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			logf("%v", err)
		}
		_, _ = os.Stderr.Write(text)
	}
}

// showTail copies the last n lines of a file to stderr.
func showTail(path string, n int) {
	text, _ := os.ReadFile(path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(text), "\n"), "\n")
	tail := strings.Join(lines[max(0, len(lines)-n):], "")
	_, _ = fmt.Fprintln(os.Stderr, tail)
}

// fileContains: the file at path has s in it.
func fileContains(path, s string) bool {
	text, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(text), s)
}
