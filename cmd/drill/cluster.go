package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
)

// cluster is make cluster on servers of the drill's own: its up command
// runs in a session of its own, so that stopping it reaches its instances
// and HAProxy too.
type cluster struct {
	dir    string
	addr   string // HAProxy's
	upLog  string // the up command's output
	up     *os.Process
	exited chan struct{} // closed when the up command has ended
}

// ownCluster starts the cluster's up command on a free port, its output in
// DIR/cluster-up.log, and returns once HAProxy answers /readyz (60 s at
// most), with DIR/env's variables in the environment of what the drill
// runs next (the hammer mints its tokens with AUTH_SECRET). The caller
// calls down when it ends; a start that fails has stopped it already.
func ownCluster(ctx context.Context, dir string, logger *log.Logger) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := topology("port").Output()
	if err != nil {
		return nil, fmt.Errorf("no free port for HAProxy: %w", err)
	}
	c := &cluster{
		dir:    dir,
		addr:   "127.0.0.1:" + strings.TrimSpace(string(port)),
		upLog:  filepath.Join(dir, "cluster-up.log"),
		exited: make(chan struct{}),
	}
	out, err := os.Create(c.upLog)
	if err != nil {
		return nil, err
	}
	defer func() { _ = out.Close() }()
	cmd := topology("cluster", "up", dir)
	cmd.Env = append(os.Environ(), "HTTP_ADDR="+c.addr)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start make cluster: %w", err)
	}
	c.up = cmd.Process
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	if err := c.awaitServing(ctx, 60*time.Second); err != nil {
		c.down(logger)
		return nil, err
	}
	if err := exportEnv(filepath.Join(dir, "env")); err != nil {
		c.down(logger)
		return nil, err
	}
	return c, nil
}

// awaitServing waits up to within until HAProxy answers /readyz; it fails
// with the end of the up command's log when that command ends first.
func (c *cluster) awaitServing(ctx context.Context, within time.Duration) error {
	ready := make(chan error, 1)
	go func() { ready <- devenv.AwaitReady(c.addr, within) }()
	select {
	case err := <-ready:
		if err != nil {
			return fmt.Errorf("the cluster is not ready: %w (see %s)", err, c.upLog)
		}
		return nil
	case <-c.exited:
		return fmt.Errorf("make cluster ended; %s ends:\n%s", c.upLog, tail(c.upLog, 40))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// down stops the cluster (SIGTERM to its session: the instances drain,
// HAProxy stops) and deletes its servers' data, the PostgreSQL clusters
// wherever they live; the logs stay in DIR.
func (c *cluster) down(logger *log.Logger) {
	_ = syscall.Kill(-c.up.Pid, syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(90 * time.Second):
		logger.Printf("make cluster (pid %d) still ran 90 s after SIGTERM: killed", c.up.Pid)
		_ = syscall.Kill(-c.up.Pid, syscall.SIGKILL)
		<-c.exited
	}
	if out, err := topology("purge", c.dir).CombinedOutput(); err != nil {
		logger.Printf("deleting the servers' data under %s failed: %v\n%s", c.dir, err, out)
	}
}

// exportEnv puts the shell assignments of path (NAME=value a line, the
// value perhaps quoted) into the environment.
func exportEnv(path string) error {
	vars, err := readEnv(path)
	if err != nil {
		return err
	}
	for name, value := range vars {
		if err := os.Setenv(name, value); err != nil {
			return err
		}
	}
	return nil
}

// readEnv reads the shell assignments of path: DIR/env, DIR/tokens.env.
func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	vars := map[string]string{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if len(value) >= 2 && (value[0] == '\'' || value[0] == '"') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		vars[name] = value
	}
	if err := lines.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(vars) == 0 {
		return nil, errors.New(path + " holds no assignments")
	}
	return vars, nil
}
