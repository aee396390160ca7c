package lockenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// install is what a failure to find a server's binary tells to do.
const install = "install it (Debian's redis-server and postgresql packages; `make test` installs them)"

// startRedis starts the shared standalone Redis (no persistence).
func (s *servers) startRedis() (string, error) {
	p, port, err := s.redisServer("redis")
	if err != nil {
		return "", err
	}
	s.started = append(s.started, p)
	return "redis://127.0.0.1:" + strconv.Itoa(port) + "/0", nil
}

// redisServer starts a redis-server in DIR/name on a free port, with args
// after the common ones, and waits for it to answer; it tries other ports
// when another process took its own first.
func (s *servers) redisServer(name string, args ...string) (*Process, int, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, 0, fmt.Errorf("redis-server not found: %s, or name a Redis in TEST_REDIS_URL and TEST_REDIS_CLUSTER_URL", install)
	}
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, err
	}
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return nil, 0, err
		}
		p, err := launch(name, filepath.Join(dir, "redis.log"), syscall.SIGTERM, nil, bin,
			RedisArgs(strconv.Itoa(port), dir, args...)...)
		if err != nil {
			return nil, 0, err
		}
		if lastErr = awaitRedis(p, port); lastErr == nil {
			return p, port, nil
		}
		_ = p.Stop(10 * time.Second)
		if !portTaken(p.Tail(5)) {
			break
		}
	}
	return nil, 0, lastErr
}

// awaitRedis waits until p answers on port (p itself, by its process id:
// not a server of another test binary that took the port first).
func awaitRedis(p *Process, port int) error {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, Protocol: protocol})
	defer func() { _ = client.Close() }()
	want := "process_id:" + strconv.Itoa(p.Pid()) + "\r\n"
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !p.Exited() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := client.Info(ctx, "server").Result()
		cancel()
		if err == nil && strings.Contains(info, want) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s on port %d did not start:\n%s", p.Name, port, p.Tail(10))
}

// startCluster starts three cluster-enabled redis-server nodes, gives each
// a third of the hash slots, joins them and waits until every node sees
// the cluster whole (cluster_state:ok).
func (s *servers) startCluster() (string, error) {
	var addrs []string
	var clients []*redis.Client
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 3 {
		// Each node's cluster bus on a port of its own (not port+10000,
		// which may be above 32767 or taken).
		bus, err := FreePort()
		if err != nil {
			return "", err
		}
		p, port, err := s.redisServer("cluster-"+strconv.Itoa(i+1), "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-port", strconv.Itoa(bus))
		if err != nil {
			return "", err
		}
		s.started = append(s.started, p)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		addrs = append(addrs, addr)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Protocol: protocol})
		clients = append(clients, c)
		lo, hi := i*16384/3, (i+1)*16384/3-1
		if err := c.Do(ctx, "cluster", "addslotsrange", lo, hi).Err(); err != nil {
			return "", fmt.Errorf("cluster node %s: add slots: %w", addr, err)
		}
		if err := c.Do(ctx, "cluster", "set-config-epoch", i+1).Err(); err != nil {
			return "", fmt.Errorf("cluster node %s: set config epoch: %w", addr, err)
		}
		if i > 0 {
			if err := clients[0].Do(ctx, "cluster", "meet", "127.0.0.1", port, bus).Err(); err != nil {
				return "", fmt.Errorf("cluster node %s: meet: %w", addr, err)
			}
		}
	}
	for i, c := range clients {
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("cluster node %s did not see the cluster whole in 60 s (%v):\n%s", addrs[i], err, info)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return "redis+cluster://" + strings.Join(addrs, ","), nil
}

// startPostgres creates a PostgreSQL cluster (initdb, fsync off: it is
// thrown away) and starts it on a free port. As root, both run as the
// postgres system user, which the OS package creates, in a directory that
// user owns.
func (s *servers) startPostgres() (string, error) {
	bin, err := PostgresBin()
	if err != nil {
		return "", err
	}
	cred, err := PostgresUser()
	if err != nil {
		return "", err
	}
	if cred != nil {
		// The postgres user must pass through it to reach pg-*.
		if err := os.Chmod(s.dir, 0o755); err != nil {
			return "", err
		}
	}
	dir, err := PostgresDir(s.dir, "pg-", cred)
	if err != nil {
		return "", err
	}
	if filepath.Dir(dir) != s.dir {
		s.pgDir = dir
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	password := hex.EncodeToString(b[:])
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return "", err
	}
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return "", err
		}
	}
	data := filepath.Join(dir, "data")
	initdb, err := launch("initdb", filepath.Join(dir, "initdb.log"), syscall.SIGTERM, cred,
		filepath.Join(bin, "initdb"), "-D", data, "-U", "lockenv", "--pwfile="+pwfile,
		"--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions")
	if err != nil {
		return "", err
	}
	<-initdb.done
	_ = os.Remove(pwfile)
	if !initdb.cmd.ProcessState.Success() {
		return "", fmt.Errorf("initdb failed:\n%s", initdb.Tail(20))
	}
	var lastErr error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return "", err
		}
		p, err := launch("postgres", filepath.Join(dir, "server.log"), syscall.SIGINT, cred,
			filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
			"-c", "max_connections=300",
			// A throwaway cluster: durability buys nothing.
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
		if err != nil {
			return "", err
		}
		url := fmt.Sprintf("postgres://lockenv:%s@127.0.0.1:%d/postgres?sslmode=disable", password, port)
		if lastErr = awaitPostgres(p, url); lastErr == nil {
			s.started = append(s.started, p)
			return url, nil
		}
		_ = p.Stop(10 * time.Second)
		if !portTaken(p.Tail(10)) {
			break
		}
	}
	return "", lastErr
}

// PostgresBin finds the directory of initdb and postgres: Debian's
// /usr/lib/postgresql/VERSION/bin (the newest), else the PATH.
func PostgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestVersion := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil && v > bestVersion {
			best, bestVersion = d, v
		}
	}
	if best != "" {
		return best, nil
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(initdb), nil
	}
	return "", fmt.Errorf("PostgreSQL not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on the PATH): %s, or name a server in TEST_DATABASE_URL", install)
}

// PostgresUser is the user PostgreSQL runs as: nil (this process's own)
// unless this process is root, which PostgreSQL refuses; then the postgres
// system user.
func PostgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	uid, gid, _, err := lookupUser("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL refuses to run as root, and there is no postgres user to run it as (%v): %s", err, install)
	}
	return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}, nil
}

// PostgresDir makes a new directory (os.MkdirTemp's pattern) that the
// user cred runs PostgreSQL in: under parent when that user can reach it,
// else under the postgres user's home (parent may be in a mode-700 home).
func PostgresDir(parent, pattern string, cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil || cred == nil {
		return dir, err
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return "", err
	}
	if canWrite(cred, dir) {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	_, _, home, err := lookupUser("postgres")
	if err != nil {
		return "", err
	}
	dir, err = os.MkdirTemp(home, pattern)
	if err != nil {
		return "", fmt.Errorf("the postgres user cannot reach %s, and no directory could be made in its home: %w", parent, err)
	}
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		return "", err
	}
	if !canWrite(cred, dir) {
		return "", fmt.Errorf("the postgres user can write neither under %s nor %s", parent, dir)
	}
	return dir, nil
}

// canWrite reports whether the user cred can enter and write dir.
func canWrite(cred *syscall.Credential, dir string) bool {
	cmd := exec.Command("test", "-w", dir, "-a", "-x", dir)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	return cmd.Run() == nil
}

// lookupUser returns the ids and home directory of the user name.
func lookupUser(name string) (uid, gid uint32, home string, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, "", err
	}
	id, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, "", err
	}
	group, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, "", err
	}
	return uint32(id), uint32(group), u.HomeDir, nil
}

// awaitPostgres waits until p accepts a connection at url (with its
// password: not a server of another test binary that took the port first).
func awaitPostgres(p *Process, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) && !p.Exited() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("PostgreSQL did not start (%v):\n%s", lastErr, p.Tail(20))
}
