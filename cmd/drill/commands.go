package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"time"
)

// topology is a command of the local topology's tool (cmd/devenv, built
// into bin/ first): "cluster up DIR" (and roll, failover, pg-switchover,
// pg-failover), "smoke DIR". The drill runs these as processes of their
// own, not calls: the cluster lives in a session of its own, which the
// drill ends with a signal, and each change's log is its output.
func topology(args ...string) *exec.Cmd {
	return exec.Command("bin/devenv", args...)
}

// build builds the binaries the drill runs, bin/NAME from cmd/NAME or
// tools/NAME.
func build(ctx context.Context, packages ...string) error {
	for _, pkg := range packages {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", "bin/"+path.Base(pkg), "./"+pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build ./%s: %w", pkg, err)
		}
	}
	return nil
}

// background starts cmd with its stdout in the file out and its stderr in
// the file errs; when ctx ends first it gets SIGTERM.
func background(ctx context.Context, out, errs, name string, args ...string) (*exec.Cmd, error) {
	stdout, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stdout.Close() }()
	stderr, err := os.Create(errs)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stderr.Close() }()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return cmd, nil
}

// output runs cmd (runGroup), its stderr appended to the file logPath,
// and returns its stdout.
func output(ctx context.Context, cmd *exec.Cmd, logPath string) (string, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	defer func() { _ = logFile.Close() }()
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, logFile
	err = runGroup(ctx, cmd)
	return stdout.String(), err
}

// runGroup runs cmd in a process group of its own. When ctx ends first (a
// timeout, the drill interrupted), the whole group gets SIGTERM, as
// timeout(1) does: a script's children end with it.
func runGroup(ctx context.Context, cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) })
	defer stop()
	return cmd.Wait()
}

// pause waits d, or less when ctx ends first.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exitStatus is a finished command's exit status as a shell tells it: 0,
// its code, or 128 and the signal that ended it.
func exitStatus(err error) int {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		if err == nil {
			return 0
		}
		return -1
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}

// tail is the last n lines of the file path, for a message.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
