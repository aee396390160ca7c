package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/seatlock/seatlock/internal/devenv"
)

// run is make run: make run's Redis and PostgreSQL under dir (kept
// between runs), then the API in the foreground on HTTP_ADDR. Its
// address goes to dir/served.env and its tokens to dir/tokens.env while
// it serves (devenv.Claim), and its pid to dir/api/<this pid>.pid for
// make stop (a `make run &` ignores Ctrl-C). A failure to start (the
// address in use, a bad setting) stops the servers this run started.
func run(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	startedBefore := devenv.RedisRunning(dir)
	env, err := devenv.Start(dir)
	if err != nil {
		return err
	}
	addr := os.Getenv("HTTP_ADDR")
	if addr == "" {
		addr = devenv.DefaultAddr
	}
	environ := append(os.Environ(), env.Environ()...)
	// Once make cluster has given Redis its Sentinels, the service finds
	// the master through them, as the cluster's instances do: after a
	// failover the Redis of REDIS_URL is a read-only replica.
	redisURL := env.RedisURL
	if url, ok := devenv.RunningSentinels(dir); ok {
		redisURL = url
		environ = append(environ, "REDIS_URL="+url)
	}
	environ = append(environ, "HTTP_ADDR="+addr)
	// A developer's first webhook receiver runs on this machine
	// (http://127.0.0.1:…): make run's service accepts such endpoints,
	// unless the environment says otherwise.
	for _, name := range []string{"WEBHOOK_ALLOW_INSECURE", "WEBHOOK_ALLOW_PRIVATE"} {
		if _, set := os.LookupEnv(name); !set {
			environ = append(environ, name+"=true")
		}
	}
	if os.Getenv("LOG_FORMAT") == "" && onTerminal(os.Stdout) {
		environ = append(environ, "LOG_FORMAT=text") // a person reads it
	}
	if err := os.MkdirAll(filepath.Join(dir, "api"), 0o755); err != nil {
		return err
	}
	if err := devenv.Claim(dir, addr, "make run", os.Getpid()); err != nil {
		return err
	}
	defer devenv.Release(dir, os.Getpid())
	if err := printRunBanner(dir, env, redisURL); err != nil {
		return err
	}

	api := exec.Command("bin/api", "serve")
	api.Env, api.Stdin, api.Stdout, api.Stderr = environ, os.Stdin, os.Stdout, os.Stderr
	// Ctrl-C reaches the API too (one process group): it drains, and this
	// process waits for it instead of dying first.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	if err := api.Start(); err != nil {
		return err
	}
	pidFile := filepath.Join(dir, "api", strconv.Itoa(os.Getpid())+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(api.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	defer func() { _ = os.Remove(pidFile) }()
	go func() {
		for sig := range signals {
			if sig == syscall.SIGTERM { // aimed at this process alone
				_ = api.Process.Signal(sig)
			}
		}
	}()
	err = api.Wait()
	if err != nil && !startedBefore {
		devenv.Release(dir, os.Getpid())
		_ = devenv.Stop(dir, os.Stderr)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitCode(exit.ExitCode())
	}
	return err
}

func printRunBanner(dir string, env devenv.Env, redisURL string) error {
	tokens, err := devenv.ReadTokens(dir)
	if err != nil {
		return err
	}
	tokensFile := filepath.Join(dir, "tokens.env")
	fmt.Printf(`Redis      %s
PostgreSQL 127.0.0.1:%d (database seatlock; data in %s; credentials in %s)
API        %s   (Ctrl-C stops it; 'make stop' stops it, Redis and PostgreSQL; 'make clean' deletes the data too)

Tokens (24h), also in %s for a second terminal:
  . %s    # sets API, ADMIN, ALICE and BOB
  make token USER=carol [ROLE=admin]   # mints another
  make smoke; make hammer              # follow %s while it serves

Admin token:
%s

User token for "alice":
%s

`, redisURL, env.PGPort, env.PGDir, filepath.Join(dir, "env"), tokens["API"],
		tokensFile, tokensFile, tokens["API"], tokens["ADMIN"], tokens["ALICE"])
	return nil
}

func onTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// exitCode ends the command with the API's own exit status.
type exitCode int

func (c exitCode) Error() string { return "exit status " + strconv.Itoa(int(c)) }
