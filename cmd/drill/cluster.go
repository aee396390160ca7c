package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
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
	port, err := lockenv.FreePort()
	if err != nil {
		return nil, fmt.Errorf("no free port for HAProxy: %w", err)
	}
	c := &cluster{
		dir:    dir,
		addr:   "127.0.0.1:" + strconv.Itoa(port),
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
	if err := exportEnv(dir); err != nil {
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
	if err := devenv.Purge(c.dir, logger.Writer()); err != nil {
		logger.Printf("deleting the servers' data under %s failed: %v", c.dir, err)
	}
}

// exportEnv puts the service's settings for DIR's servers (DIR/env)
// into the environment, for the hammer and the tools the drill runs.
func exportEnv(dir string) error {
	env, err := devenv.LoadEnv(dir)
	if err != nil {
		return err
	}
	for _, setting := range env.Environ() {
		name, value, _ := strings.Cut(setting, "=")
		if err := os.Setenv(name, value); err != nil {
			return err
		}
	}
	return nil
}
