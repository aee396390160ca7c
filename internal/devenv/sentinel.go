package devenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Sentinels is what DIR/sentinel/env says: the replica's port, the three
// Sentinels' and the service's REDIS_URL for them.
type Sentinels struct {
	ReplicaPort int
	Ports       []int
	// URL is redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/seatlock/0.
	URL string
}

func sentinelHome(dir string) string { return filepath.Join(dir, "sentinel") }

// LoadSentinels reads DIR/sentinel/env, which Sentinel wrote.
func LoadSentinels(dir string) (Sentinels, error) {
	vars, err := readEnvFile(filepath.Join(sentinelHome(dir), "env"))
	if err != nil {
		return Sentinels{}, fmt.Errorf("no Sentinels under %s (make cluster first): %w", dir, err)
	}
	s := Sentinels{URL: vars["SENTINEL_URL"]}
	if s.ReplicaPort, err = strconv.Atoi(vars["REPLICA_PORT"]); err != nil {
		return Sentinels{}, fmt.Errorf("%s/env: REPLICA_PORT %q", sentinelHome(dir), vars["REPLICA_PORT"])
	}
	for _, f := range strings.Fields(vars["SENTINEL_PORTS"]) {
		p, err := strconv.Atoi(f)
		if err != nil {
			return Sentinels{}, fmt.Errorf("%s/env: SENTINEL_PORTS %q", sentinelHome(dir), vars["SENTINEL_PORTS"])
		}
		s.Ports = append(s.Ports, p)
	}
	return s, nil
}

func newSentinels() (Sentinels, error) {
	ports, err := freePorts(4)
	if err != nil {
		return Sentinels{}, err
	}
	s := Sentinels{ReplicaPort: ports[0], Ports: ports[1:]}
	hosts := make([]string, len(s.Ports))
	for i, p := range s.Ports {
		hosts[i] = hostPort(p)
	}
	s.URL = "redis+sentinel://" + strings.Join(hosts, ",") + "/" + SentinelMaster + "/0"
	return s, nil
}

func (s Sentinels) write(dir string) error {
	return writeEnvFile(filepath.Join(sentinelHome(dir), "env"), []setting{
		{"SENTINEL_MASTER", SentinelMaster},
		{"REPLICA_PORT", strconv.Itoa(s.ReplicaPort)},
		{"SENTINEL_PORTS", joinPids(s.Ports)},
		{"SENTINEL_URL", s.URL},
	})
}

// Sentinel gives DIR's Redis (Start's) a replica and three Sentinels
// watching it as SentinelMaster, each on a port chosen once and kept in
// DIR/sentinel/env, and returns once every Sentinel knows the replica and
// the two others. Those already running are kept: after a failover they
// know where the master is now.
func Sentinel(dir string) (Sentinels, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Sentinels{}, err
	}
	e, err := LoadEnv(dir)
	if err != nil {
		return Sentinels{}, err
	}
	home := sentinelHome(dir)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return Sentinels{}, err
	}
	if _, err := os.Stat(filepath.Join(home, "env")); errors.Is(err, os.ErrNotExist) {
		s, err := newSentinels()
		if err != nil {
			return Sentinels{}, err
		}
		if err := s.write(dir); err != nil {
			return Sentinels{}, err
		}
	}
	s, err := LoadSentinels(dir)
	if err != nil {
		return Sentinels{}, err
	}
	if _, err := startRedis(filepath.Join(home, "replica"), s.ReplicaPort, "--replicaof", "127.0.0.1", strconv.Itoa(e.RedisPort)); err != nil {
		return Sentinels{}, err
	}
	for i, port := range s.Ports {
		if err := startSentinel(filepath.Join(home, strconv.Itoa(i+1)), port, e.RedisPort); err != nil {
			return Sentinels{}, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, port := range s.Ports {
		if err := awaitTrue(ctx, 200*time.Millisecond, func() (bool, error) { return SentinelReady(ctx, hostPort(port)) }); err != nil {
			var logs strings.Builder
			for _, log := range glob(filepath.Join(home, "*", "sentinel.log")) {
				fmt.Fprintf(&logs, "\n%s:\n%s", log, tail(log, 5))
			}
			return Sentinels{}, fmt.Errorf("the Sentinel on port %d does not know the replica and the two other Sentinels after 30 s (%v)%s", port, err, logs.String())
		}
	}
	return s, nil
}

// startSentinel starts a daemonized redis-sentinel in sdir on port,
// watching the master on masterPort, unless one runs there.
func startSentinel(sdir string, port, masterPort int) error {
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	if runningFrom(filepath.Join(sdir, "sentinel.pid")) != 0 {
		return nil
	}
	conf := filepath.Join(sdir, "sentinel.conf")
	text := SentinelConf{Port: port, Dir: sdir, MasterPort: masterPort, Daemonize: true}.Text()
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("redis-sentinel", conf).CombinedOutput(); err != nil {
		return fmt.Errorf("redis-sentinel %s: %w: %s", conf, err, out)
	}
	return nil
}

// stopSentinels stops DIR's Sentinels and replica and waits for them to
// exit (a `make cluster` right after reuses their ports).
func stopSentinels(dir string) []int {
	home := sentinelHome(dir)
	return stopPidfiles(append(glob(filepath.Join(home, "*", "sentinel.pid")), filepath.Join(home, "replica", "redis.pid"))...)
}
