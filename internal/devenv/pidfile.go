package devenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// readPid returns the pid a pid file names (its first line), or 0.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// writePid records pid in path.
func writePid(path string, pid int) error {
	return os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

// running reports whether pid exists and is not a zombie (a daemonized
// server's parent is init, which may reap it late).
func running(pid int) bool {
	st := procStat(pid)
	return len(st) > 0 && st[0] != "Z"
}

// procStat returns the fields of /proc/PID/stat after the command's name
// (state, ppid, pgrp, session, ...), or nil when pid is gone.
func procStat(pid int) []string {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
}

// runningFrom returns the pid a pid file names when that process runs,
// else 0.
func runningFrom(path string) int {
	if pid := readPid(path); running(pid) {
		return pid
	}
	return 0
}

// waitGone waits up to within for pid to exit, and reports whether it
// did.
func waitGone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !running(pid) {
			return true
		}
	}
	return !running(pid)
}

// terminate sends SIGTERM to pid when it runs, and reports whether it
// did.
func terminate(pid int) bool {
	return running(pid) && syscall.Kill(pid, syscall.SIGTERM) == nil
}

// stopPidfiles sends SIGTERM to each running process a pid file names,
// then waits up to 5 s for each to exit; it returns their pids.
func stopPidfiles(paths ...string) []int {
	var stopped []int
	for _, path := range paths {
		if pid := readPid(path); terminate(pid) {
			stopped = append(stopped, pid)
		}
	}
	for _, pid := range stopped {
		waitGone(pid, 5*time.Second)
	}
	return stopped
}

// glob is filepath.Glob, whose only error is a bad pattern.
func glob(pattern string) []string {
	paths, _ := filepath.Glob(pattern)
	return paths
}

// joinPids lists pids as "1 2 3".
func joinPids(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}
