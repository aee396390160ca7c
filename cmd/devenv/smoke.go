package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// httpyac is the pinned client make smoke runs api.http in.
const httpyac = "httpyac@6.16.7"

// smoke is make smoke: api.http, unattended, in a real client (httpyac),
// against the service on HTTP_ADDR (the address make run or make cluster
// serves on, see devenv.ServedAddr). When none answers there it says so,
// tests a service started for the run on make run's servers (under dir)
// instead, and stops what it started afterwards. Fresh admin, alice and
// bob tokens go into http-client.private.env.json (git-ignored), the
// environment "smoke".
func smoke(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	addr := devenv.ServedAddr(dir)
	if _, err := os.Stat(filepath.Join(dir, "env")); err == nil && devenv.Ready(addr) {
		logf("smoke", "using the service on %s", addr)
	} else {
		stop, err := smokeService(dir, &addr)
		if err != nil {
			return err
		}
		defer stop()
	}
	env, err := devenv.LoadEnv(dir)
	if err != nil {
		return err
	}
	if err := writeSmokeEnv(addr, env.AuthSecret); err != nil {
		return err
	}
	cmd := exec.Command("bash", "scripts/node.sh", "npx", "--yes", httpyac,
		"send", "api.http", "--all", "--env", "smoke", "--output", "short")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// smokeService serves the API on a free port on make run's servers
// (starting them if need be) and sets addr to it; stop undoes what it
// started.
func smokeService(dir string, addr *string) (stop func(), err error) {
	wanted := *addr
	startedServers := !devenv.RedisRunning(dir)
	stopServers := func() {
		if startedServers {
			_ = devenv.Stop(dir, os.Stderr)
		}
	}
	env, err := devenv.Start(dir)
	if err != nil {
		stopServers()
		return nil, err
	}
	port, err := lockenv.FreePort()
	if err != nil {
		stopServers()
		return nil, err
	}
	*addr = "127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(dir, "smoke-api.log")
	api, err := devenv.Serve("the service", logPath, env.Environ(), *addr, "bin/api", "serve")
	if err != nil {
		stopServers()
		return nil, err
	}
	logf("smoke", "no service answers on %s: testing a service started for this run on %s instead (log: %s)", wanted, *addr, logPath)
	return func() { _ = api.Stop(30 * time.Second); stopServers() }, nil
}

// writeSmokeEnv writes http-client.private.env.json's "smoke" environment:
// the service's URL and one-hour tokens of make run's admin and two users,
// under the names api.http uses.
func writeSmokeEnv(addr, secret string) error {
	tokens, err := devenv.MintDevelopmentTokens(secret, time.Hour)
	if err != nil {
		return err
	}
	env := map[string]string{
		"baseUrl":        "http://" + addr,
		"adminToken":     tokens["ADMIN"],
		"userToken":      tokens["ALICE"],
		"otherUserToken": tokens["BOB"],
	}
	text, err := json.MarshalIndent(map[string]any{"smoke": env}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile("http-client.private.env.json", append(text, '\n'), 0o600)
}
