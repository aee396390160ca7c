package devenv

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// ClusterUp is `make cluster`: DIR's servers (Start), the replica and
// Sentinels (Sentinel), the PostgreSQL pair (Patroni), three instances of
// bin on free ports reaching Redis through the Sentinels and PostgreSQL
// through both nodes of the pair, and HAProxy on addr before them,
// health-checked through /readyz. It writes its banner to out once HAProxy
// serves, and runs until ctx ends; then it stops the instances and
// HAProxy (the servers stay, for `devenv stop`). Its pid is in
// DIR/cluster/up.pid meanwhile, for `devenv stop`; while HAProxy serves,
// DIR/served.env and DIR/tokens.env name addr (Claim).
func ClusterUp(ctx context.Context, dir, addr, bin string, say, out io.Writer) (err error) {
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := Install(say, HAProxy); err != nil {
		return err
	}
	if _, err := Start(dir); err != nil {
		return err
	}
	sentinels, err := Sentinel(dir)
	if err != nil {
		return err
	}
	pair, err := Patroni(dir, say)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	if Ready(addr) {
		return fmt.Errorf("something already serves on %s; set HTTP_ADDR", addr)
	}
	state := clusterState(dir)
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	c := &cluster{dir: dir, state: state, say: say}
	defer c.down()
	if err := writePid(filepath.Join(state, "up.pid"), os.Getpid()); err != nil {
		return err
	}
	env, err := instanceEnv(dir)
	if err != nil {
		return err
	}
	var addrs []string
	for n := 1; n <= clusterInstances && ctx.Err() == nil; n++ {
		a, err := c.serve(instance{dir, n}, env, bin)
		if err != nil {
			return err
		}
		addrs = append(addrs, a)
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := c.startHAProxy(addr, addrs); err != nil {
		return err
	}
	if err := Claim(dir, addr, "make cluster", os.Getpid()); err != nil {
		return err
	}
	c.claimed = true
	writeBanner(out, dir, addr, addrs, sentinels, pair)
	<-ctx.Done()
	return nil
}

// cluster is what ClusterUp started, for down.
type cluster struct {
	dir, state string
	say        io.Writer
	haproxy    *lockenv.Process
	claimed    bool
}

// serve starts instance in on a free port, recorded in api-N.port, its
// pid in api-N.pid, and returns its address once it is ready.
func (c *cluster) serve(in instance, env []string, bin string) (string, error) {
	port, err := lockenv.FreePort()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(in.path(".port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(in.path(".log"), nil, 0o644); err != nil {
		return "", err
	}
	p, err := Serve(in.name(), in.path(".log"), env, hostPort(port), bin, "serve")
	if err != nil {
		return "", err
	}
	return hostPort(port), writePid(in.path(".pid"), p.Pid())
}

// startHAProxy starts HAProxy on addr before the instances and waits up
// to 10 s for it to answer /readyz.
func (c *cluster) startHAProxy(addr string, instances []string) error {
	errorfile, cfg, log := filepath.Join(c.state, "503.http"), filepath.Join(c.state, "haproxy.cfg"), filepath.Join(c.state, "haproxy.log")
	if err := os.WriteFile(errorfile, []byte(UnavailableResponse()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(cfg, []byte(HAProxyConfig(addr, errorfile, instances)), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("haproxy", "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy refused %s: %w\n%s", cfg, err, out)
	}
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		return err
	}
	p, err := lockenv.Launch("HAProxy", log, syscall.SIGTERM, nil, exec.Command("haproxy", "-f", cfg))
	if err != nil {
		return err
	}
	c.haproxy = p
	if err := writePid(filepath.Join(c.state, "haproxy.pid"), p.Pid()); err != nil {
		return err
	}
	if err := awaitReady(addr, 10*time.Second, p.Exited); err != nil {
		return fmt.Errorf("HAProxy on %s: %w (see %s):\n%s", addr, err, log, p.Tail(10))
	}
	return nil
}

// down stops the instances (those a rolling restart started again too,
// by their pid files) and HAProxy, and gives the address back.
func (c *cluster) down() {
	if c.claimed {
		Release(c.dir, os.Getpid())
	}
	var all []instance
	for n := 1; n <= clusterInstances; n++ {
		all = append(all, instance{c.dir, n})
	}
	if err := stopInstances(all...); err != nil {
		logf(c.say, "cluster", "%v", err)
	}
	for _, in := range all {
		_ = os.Remove(in.path(".pid"))
	}
	if c.haproxy != nil {
		_ = c.haproxy.Stop(5 * time.Second)
	}
	for _, name := range []string{"haproxy.pid", "up.pid"} {
		_ = os.Remove(filepath.Join(c.state, name))
	}
}

// writeBanner tells what runs where and what to try.
func writeBanner(out io.Writer, dir, addr string, addrs []string, s Sentinels, p Pair) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	master, err := MasterAddr(ctx, hostPort(s.Ports[0]))
	if err != nil {
		master = "unknown: " + err.Error()
	}
	leader, standby := p.Nodes[0], p.Nodes[1]
	if l := p.Leader(); l != nil {
		leader, standby = *l, p.Other(*l)
	}
	var rests []string
	for _, n := range p.Nodes {
		rests = append(rests, n.REST())
	}
	state := clusterState(dir)
	pg := pairHome(dir)
	cmd := "go run ./cmd/devenv cluster"
	_, _ = fmt.Fprintf(out, `API        http://%s   (HAProxy: %d instances, health-checked through /readyz)
instances  %s
Redis      %s   (master %s, one replica)
PostgreSQL %s (%s, leader) and %s (%s, synchronous standby), under Patroni
           (REST %s; etcd http://%s; credentials in %s/env)
logs       %s/api-N.log, %s/haproxy.log, %s/N/sentinel.log, %s/{pg1,pg2,etcd}.log
tokens     . %s/tokens.env   (API, ADMIN, ALICE, BOB)
try        make smoke; make hammer ARGS='-scenario fresh-seats -watch'; the page: http://%s/
           during a failover: make hammer ARGS='-scenario fresh-seats -allow-unavailable' (503s expected)
rolling    %s roll %s            (restarts the instances one by one)
failover   %s failover %s        (the Sentinels promote the replica)
pg         %s pg-switchover %s   (Patroni hands the lead to the standby)
           %s pg-failover %s     (kills the leading node; the standby takes over)
           patronictl -c %s list
Ctrl-C stops the instances and HAProxy; 'make stop' stops them too, and Redis, its Sentinels, PostgreSQL, the Patroni nodes and etcd.
`, addr, clusterInstances, strings.Join(addrs, " "), s.URL, master,
		leader.Addr(), leader.Name, standby.Addr(), standby.Name,
		strings.Join(rests, " "), hostPort(p.EtcdPort), pg,
		state, state, sentinelHome(dir), pg,
		dir, addr, cmd, dir, cmd, dir, cmd, dir, cmd, dir, p.configPath(p.Nodes[0]))
}
