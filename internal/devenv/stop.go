package devenv

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stop stops what runs for DIR, found by pid files: make run's API
// (DIR/api/*.pid), make cluster (DIR/cluster/up.pid, sent SIGTERM: it
// stops its instances and HAProxy; then those of DIR/cluster/*.pid, in
// case it was killed), Redis, its replica and Sentinels, the Patroni nodes
// and etcd, and PostgreSQL. With say not nil it tells there what it
// stopped (make stop), and where the data stays.
func Stop(dir string, say io.Writer) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	stopped := stopAPIs(dir, say)
	e, envErr := LoadEnv(dir)
	if pid := readPid(filepath.Join(dir, "redis", "redis.pid")); terminate(pid) {
		waitGone(pid, 5*time.Second)
		stopped = append(stopped, fmt.Sprintf("Redis (pid %d, port %d)", pid, e.RedisPort))
	}
	if pids := stopSentinels(dir); len(pids) > 0 {
		stopped = append(stopped, fmt.Sprintf("the Sentinels and the replica (pids %s)", joinPids(pids)))
	}
	pair, notes := stopPair(dir)
	stopped = append(stopped, pair...)
	for _, n := range notes {
		logf(say, "devenv", "%s", n)
	}
	pgDir := filepath.Join(dir, "pg")
	if envErr == nil {
		pgDir = e.PGDir
	}
	if pg, err := newPostgres(filepath.Join(pgDir, "data")); err == nil && pg.stop() {
		stopped = append(stopped, fmt.Sprintf("PostgreSQL (port %d, data in %s)", e.PGPort, pgDir))
	}
	if len(stopped) == 0 {
		logf(say, "devenv", "nothing was running under %s", dir)
		return nil
	}
	for _, s := range stopped {
		logf(say, "devenv", "stopped %s", s)
	}
	var elsewhere []string
	if pgDir != filepath.Join(dir, "pg") {
		elsewhere = append(elsewhere, pgDir)
	}
	if p, err := LoadPair(dir); err == nil && p.Data != "" && p.Data != pairHome(dir) {
		elsewhere = append(elsewhere, p.Data)
	}
	if len(elsewhere) == 0 {
		logf(say, "devenv", "the data stays in %s ('make clean' deletes it, for a fresh start)", dir)
	} else {
		logf(say, "devenv", "the data stays in %s and %s ('make clean' deletes them, for a fresh start)", dir, strings.Join(elsewhere, " "))
	}
	return nil
}

// stopAPIs stops what make cluster and make run started for DIR (their
// API processes, HAProxy), by pid file, and returns what it stopped.
func stopAPIs(dir string, say io.Writer) (stopped []string) {
	state := clusterState(dir)
	if pid := readPid(filepath.Join(state, "up.pid")); terminate(pid) {
		// It drains its instances (SHUTDOWN_DELAY each, at once) and stops
		// HAProxy.
		if !waitGone(pid, 70*time.Second) {
			logf(say, "devenv", "make cluster (pid %d) still runs 70 s after SIGTERM", pid)
		}
		stopped = append(stopped, fmt.Sprintf("make cluster (pid %d: its %d instances and HAProxy)", pid, clusterInstances))
	}
	// Left behind by a make cluster that was killed outright.
	left := append(glob(filepath.Join(state, "api-*.pid")), filepath.Join(state, "haproxy.pid"))
	if pids := stopPidfiles(left...); len(pids) > 0 {
		stopped = append(stopped, fmt.Sprintf("make cluster's instances and HAProxy (pids %s)", joinPids(pids)))
	}
	for _, path := range append(left, filepath.Join(state, "up.pid")) {
		_ = os.Remove(path)
	}
	addr := servedValue(dir, "HTTP_ADDR")
	if pids := stopPidfiles(glob(filepath.Join(dir, "api", "*.pid"))...); len(pids) > 0 {
		last := ""
		if addr != "" {
			last = ", last served on " + addr
		}
		stopped = append(stopped, fmt.Sprintf("make run's API (pid %s%s)", joinPids(pids), last))
	}
	// make run releases its address as it ends (Release); an
	// owner that is gone without doing so leaves no address behind.
	if owner, err := strconv.Atoi(servedValue(dir, "SERVED_PID")); err == nil {
		waitGone(owner, 5*time.Second)
	}
	if _, err := os.Stat(filepath.Join(dir, "served.env")); err == nil {
		if owner, _ := strconv.Atoi(servedValue(dir, "SERVED_PID")); !running(owner) {
			_ = os.Remove(filepath.Join(dir, "served.env"))
			_ = os.Remove(filepath.Join(dir, "tokens.env"))
		}
	}
	for _, path := range append(glob(filepath.Join(dir, "served.env.*")), glob(filepath.Join(dir, "tokens.env.[0-9]*"))...) {
		_ = os.Remove(path)
	}
	for _, path := range glob(filepath.Join(dir, "api", "*.pid")) {
		if !running(readPid(path)) {
			_ = os.Remove(path)
		}
	}
	return stopped
}
