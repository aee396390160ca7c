package devenv

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clusterInstances is how many API instances make cluster runs behind
// HAProxy.
const clusterInstances = 3

// clusterState is where make cluster keeps its state: the instances'
// ports, pids and logs, HAProxy's configuration, pid and log, and up.pid.
func clusterState(dir string) string { return filepath.Join(dir, "cluster") }

// instance is make cluster's instance n (1, 2, 3) of DIR.
type instance struct {
	dir string
	n   int
}

func (in instance) name() string { return "instance " + strconv.Itoa(in.n) }
func (in instance) path(ext string) string {
	return filepath.Join(clusterState(in.dir), "api-"+strconv.Itoa(in.n)+ext)
}

// addr is the instance's address, chosen by make cluster (api-N.port).
func (in instance) addr() (string, error) {
	b, err := os.ReadFile(in.path(".port"))
	if err != nil {
		return "", fmt.Errorf("%s has no port: %w", in.name(), err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("%s: %w", in.path(".port"), err)
	}
	return hostPort(port), nil
}

// instanceEnv is the instances' environment: DIR/env's and
// DIR/sentinel/env's settings, Redis through the Sentinels, PostgreSQL
// through the pair's two nodes (target_session_attrs=read-write), JSON
// logs, and SHUTDOWN_DELAY (2 s unless set): on SIGTERM an instance keeps
// serving while /readyz answers 503, HAProxy takes it out of rotation,
// and only then does its port close. HAProxy reaches the instances from
// 127.0.0.1 and names the client in X-Forwarded-For (TRUSTED_PROXIES): the
// per-address limit counts each client.
func instanceEnv(dir string) ([]string, error) {
	var env []string
	for _, path := range []string{envPath(dir), filepath.Join(sentinelHome(dir), "env")} {
		vars, err := readEnvFile(path)
		if err != nil {
			return nil, err
		}
		env = append(env, envLines(vars)...)
	}
	s, err := LoadSentinels(dir)
	if err != nil {
		return nil, err
	}
	p, err := LoadPair(dir)
	if err != nil {
		return nil, err
	}
	return append(env, "REDIS_URL="+s.URL, "DATABASE_URL="+p.DatabaseURL,
		"SHUTDOWN_DELAY="+cmp.Or(os.Getenv("SHUTDOWN_DELAY"), "2s"), "LOG_FORMAT=json",
		"TRUSTED_PROXIES="+cmp.Or(os.Getenv("TRUSTED_PROXIES"), "127.0.0.1")), nil
}

// restart starts the instance again, to outlive this command (a rolling
// restart's), and waits up to 30 s until it is ready.
func (in instance) restart(bin string) error {
	a, err := in.addr()
	if err != nil {
		return err
	}
	env, err := instanceEnv(in.dir)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(append(os.Environ(), env...), "HTTP_ADDR="+a)
	d, err := detach(in.name(), in.path(".log"), in.path(".pid"), nil, cmd)
	if err != nil {
		return err
	}
	return d.await("ready", 30*time.Second, func() bool { return Ready(a) })
}

// stopInstances sends SIGTERM to each instance, then waits for them to
// drain and exit.
func stopInstances(ins ...instance) error {
	var pids []int
	for _, in := range ins {
		if pid := readPid(in.path(".pid")); terminate(pid) {
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		if !waitGone(pid, 60*time.Second) {
			return fmt.Errorf("instance pid %d still running 60 s after SIGTERM", pid)
		}
	}
	return nil
}
