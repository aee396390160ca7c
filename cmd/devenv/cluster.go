package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/seatlock/seatlock/internal/devenv"
)

// cluster is `devenv cluster SUB DIR`, run from the repository's root.
func cluster(sub, dir string) error {
	say := os.Stderr
	switch sub {
	case "up":
		bin, err := buildAPI()
		if err != nil {
			return err
		}
		addr := os.Getenv("HTTP_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8080"
		}
		// (A `make cluster &` started by a shell without job control
		// ignores SIGINT: `make stop` sends SIGTERM.)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return devenv.ClusterUp(ctx, dir, addr, bin, say, os.Stdout)
	case "roll":
		bin, err := filepath.Abs(filepath.Join("bin", "api"))
		if err != nil {
			return err
		}
		return devenv.Roll(dir, bin, say)
	case "failover":
		return devenv.Failover(dir, say)
	case "pg-switchover", "pg-failover":
		change := devenv.PGSwitchover
		if sub == "pg-failover" {
			change = devenv.PGFailover
		}
		c, err := change(dir, say)
		if err == nil {
			fmt.Println(c)
		}
		return err
	}
	return fmt.Errorf("usage: devenv cluster up|roll|failover|pg-switchover|pg-failover DIR")
}

// buildAPI builds the service into bin/api and returns its absolute path.
func buildAPI() (string, error) {
	bin, err := filepath.Abs(filepath.Join("bin", "api"))
	if err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/api")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/api: %w", err)
	}
	return bin, nil
}
