package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// smokeCommand is make smoke (api.http in httpyac) against the service on
// addr, with DIR's servers.
func smokeCommand(dir, addr string) *exec.Cmd {
	cmd := topology("smoke", dir)
	cmd.Env = append(os.Environ(), "HTTP_ADDR="+addr)
	return cmd
}

// smoke is make smoke (api.http in httpyac) through HAProxy, its output in
// DIR/smoke.log.
func (d *drill) smoke(ctx context.Context, c *cluster) error {
	logPath := filepath.Join(d.dir, "smoke.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	cmd := smokeCommand(d.dir, c.addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := runGroup(ctx, cmd); err != nil {
		fmt.Fprintln(os.Stderr, tail(logPath, 40))
		return fmt.Errorf("make smoke failed through HAProxy (see %s)", logPath)
	}
	d.log.Printf("through HAProxy: make smoke %s", tail(logPath, 1))
	return nil
}
