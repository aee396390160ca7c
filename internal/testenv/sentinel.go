package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// SentinelMaster is the name the Sentinels of StartSentinel monitor the
// primary under: the one of `make cluster` (devenv.SentinelMaster).
const SentinelMaster = devenv.SentinelMaster

// SentinelSetup is a Redis primary, its replica and three Sentinels
// watching them, all processes of the test's own on free ports (see
// StartSentinel).
type SentinelSetup struct {
	tb        testing.TB
	Servers   []*Process // the primary (first) and the replica
	Sentinels []*Process
	// URL is the service's REDIS_URL for them:
	// redis+sentinel://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/seatlock/0.
	URL string
}

// Process is a redis-server or redis-sentinel of the test's own, killed
// when the test ends.
type Process struct {
	*lockenv.Process
	Addr string
	Dir  string
}

// StartSentinel starts a redis-server primary, a replica of it
// (--replicaof) and three redis-sentinel processes configured as `make
// cluster`'s are (devenv.SentinelConf: quorum 2, the primary down after
// 1 s), in a temporary directory, and returns once the replica is in sync
// and every Sentinel knows the replica and the two other Sentinels
// (devenv.SentinelReady): a failover can then happen. Everything is killed when the test ends. It fails the
// test (never skips) when redis-server or redis-sentinel is missing.
func StartSentinel(tb testing.TB) *SentinelSetup {
	tb.Helper()
	for _, bin := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Fatalf("%s not found: `make test` installs it (go run ./cmd/devenv install)", bin)
		}
	}
	s := &SentinelSetup{tb: tb}
	dir := tb.TempDir()
	primary := s.start(dir, "primary", "redis-server")
	replica := s.start(dir, "replica", "redis-server", "--replicaof", "127.0.0.1", port(primary.Addr))
	s.Servers = []*Process{primary, replica}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	onReplica := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer func() { _ = onReplica.Close() }()
	s.await(ctx, "the replica's link to the primary", func() (bool, error) {
		info, err := onReplica.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up"), err
	})
	var addrs []string
	for i := 1; i <= 3; i++ {
		sdir := filepath.Join(dir, "sentinel-"+strconv.Itoa(i))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			tb.Fatal(err)
		}
		addr := lockenv.FreeAddr(s.tb)
		sport, _ := strconv.Atoi(port(addr))
		mport, _ := strconv.Atoi(port(primary.Addr))
		conf := filepath.Join(sdir, "sentinel.conf")
		text := devenv.SentinelConf{Port: sport, Dir: sdir, MasterPort: mport}.Text()
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
		p := s.run("sentinel-"+strconv.Itoa(i), addr, sdir, filepath.Join(sdir, "sentinel.log"), exec.Command("redis-sentinel", conf))
		s.Sentinels = append(s.Sentinels, p)
		addrs = append(addrs, addr)
	}
	for _, p := range s.Sentinels {
		s.await(ctx, p.Name+" knowing the replica and the other Sentinels", func() (bool, error) {
			return devenv.SentinelReady(ctx, p.Addr)
		})
	}
	s.URL = "redis+sentinel://" + strings.Join(addrs, ",") + "/" + SentinelMaster + "/0"
	return s
}

// MasterAddr asks the Sentinels where the master is now (the first that
// answers).
func (s *SentinelSetup) MasterAddr(ctx context.Context) (string, error) {
	var lastErr error
	for _, p := range s.Sentinels {
		addr, err := devenv.MasterAddr(ctx, p.Addr)
		if err == nil {
			return addr, nil
		}
		lastErr = err
	}
	return "", fmt.Errorf("no Sentinel named the master: %v", lastErr)
}

// Server returns the redis-server process listening on addr.
func (s *SentinelSetup) Server(addr string) *Process {
	for _, p := range s.Servers {
		if p.Addr == addr {
			return p
		}
	}
	s.tb.Fatalf("no redis-server of the setup listens on %s", addr)
	return nil
}

// Log returns the last lines of the process's log file, for a failure's
// message.
func (p *Process) Log(lines int) string { return p.Tail(lines) }

func (s *SentinelSetup) start(dir, name, bin string, args ...string) *Process {
	s.tb.Helper()
	pdir := filepath.Join(dir, name)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		s.tb.Fatal(err)
	}
	addr := lockenv.FreeAddr(s.tb)
	return s.run(name, addr, pdir, filepath.Join(pdir, "redis.log"), exec.Command(bin, lockenv.RedisArgs(port(addr), pdir, args...)...))
}

// run starts cmd as name, listening on addr, and waits for its port to
// answer.
func (s *SentinelSetup) run(name, addr, dir, logPath string, cmd *exec.Cmd) *Process {
	s.tb.Helper()
	p, err := lockenv.Launch(name, logPath, syscall.SIGTERM, nil, cmd)
	if err != nil {
		s.tb.Fatal(err)
	}
	s.tb.Cleanup(p.Kill)
	if err := lockenv.AwaitListening(p, addr, 10*time.Second); err != nil {
		s.tb.Fatal(err)
	}
	return &Process{Process: p, Addr: addr, Dir: dir}
}

func (s *SentinelSetup) await(ctx context.Context, what string, ready func() (bool, error)) {
	s.tb.Helper()
	await(s.tb, ctx, what, ready, func() string { return "" })
}

// await polls ready every 50 ms until it is true; when ctx ends first it
// fails the test with what it waited for, the last error and more (the
// servers' logs, say).
func await(tb testing.TB, ctx context.Context, what string, ready func() (bool, error), more func() string) {
	tb.Helper()
	var lastErr error
	for {
		ok, err := ready()
		if ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for %s: %v (last error: %v)%s", what, ctx.Err(), lastErr, more())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
