package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// PatroniScope is the Patroni cluster name of StartPatroni, the one of
// `make cluster` (devenv.PatroniScope).
const PatroniScope = devenv.PatroniScope

// PatroniSetup is a PostgreSQL primary and its synchronous standby, each
// run by a Patroni node, with one etcd for their leader election: processes
// of the test's own on free ports (see StartPatroni).
type PatroniSetup struct {
	tb    testing.TB
	dir   string
	cred  *syscall.Credential
	etcd  *lockenv.Process
	Nodes []*PatroniNode // pg1 (the first leader) and pg2
	// URL is the service's DATABASE_URL: both nodes, and
	// target_session_attrs=read-write, so that a connection reaches
	// whichever is the primary.
	URL      string
	password string
}

// PatroniNode is one Patroni process and the PostgreSQL it runs.
type PatroniNode struct {
	Name   string // "pg1", "pg2"
	Addr   string // PostgreSQL's host:port
	API    string // Patroni's REST API, http://host:port
	config string
	data   string
	proc   *lockenv.Process // its Patroni, since the last Start
	setup  *PatroniSetup
}

// StartPatroni starts an etcd and two Patroni nodes in synchronous mode
// (synchronous_commit=on, the standby named in synchronous_standby_names)
// with the failover timings of `make cluster` (ttl 8 s, loop_wait 1 s,
// retry_timeout 3 s), creates the database "seatlock", and returns once
// pg1 leads and pg2 is its synchronous standby. Everything is killed and
// deleted when the test ends. As root, Patroni and PostgreSQL run as the
// postgres system user. It fails the test (never skips) when patroni, etcd
// or PostgreSQL is missing.
func StartPatroni(tb testing.TB) *PatroniSetup {
	tb.Helper()
	for _, bin := range []string{"patroni", "etcd"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Fatalf("%s not found: `make test` installs it (go run ./cmd/devenv install)", bin)
		}
	}
	bin, err := lockenv.PostgresBin()
	if err != nil {
		tb.Fatal(err)
	}
	s := &PatroniSetup{tb: tb, password: lockenv.Name("")}
	if s.cred, err = lockenv.PostgresUser(); err != nil {
		tb.Fatal(err)
	}
	if s.dir, err = lockenv.PostgresDir("", "patroni-", s.cred); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.stop)

	client, peer := lockenv.FreeAddr(tb), lockenv.FreeAddr(tb)
	s.etcd = s.launch("etcd", "etcd", devenv.EtcdArgs(filepath.Join(s.dir, "etcd"), client, peer)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s.await(ctx, "etcd", func() (bool, error) { return devenv.EtcdHealthy(client), nil })

	for i := 1; i <= 2; i++ {
		n := &PatroniNode{Name: "pg" + strconv.Itoa(i), Addr: lockenv.FreeAddr(tb), API: "http://" + lockenv.FreeAddr(tb), setup: s}
		n.data = filepath.Join(s.dir, n.Name)
		n.config = filepath.Join(s.dir, n.Name+".yml")
		s.writeFile(n.config, devenv.PatroniConfig{Name: n.Name, Addr: n.Addr, REST: strings.TrimPrefix(n.API, "http://"),
			Etcd: client, DataDir: n.data, BinDir: bin, PGPass: filepath.Join(s.dir, n.Name+".pgpass"),
			Superuser: s.password, Replication: s.password, Rewind: s.password, NoFsync: true}.YAML())
		s.Nodes = append(s.Nodes, n)
	}
	// pg1 bootstraps the cluster and leads; pg2 then copies it.
	s.Nodes[0].Start()
	s.AwaitLeader(ctx, s.Nodes[0])
	s.Nodes[1].Start()
	s.AwaitSyncStandby(ctx, s.Nodes[1])

	admin, err := pgx.Connect(ctx, s.nodeURL(s.Nodes[0], "postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = admin.Close(ctx) }()
	if _, err := admin.Exec(ctx, "CREATE DATABASE seatlock"); err != nil {
		tb.Fatal(err)
	}
	var hosts []string
	for _, n := range s.Nodes {
		hosts = append(hosts, n.Addr)
	}
	s.URL = fmt.Sprintf("postgres://postgres:%s@%s/seatlock?sslmode=disable&target_session_attrs=read-write",
		s.password, strings.Join(hosts, ","))
	return s
}

// Start starts the node's Patroni: the first time it bootstraps or copies
// the cluster; after Kill it rejoins as a standby (pg_rewind).
func (n *PatroniNode) Start() {
	n.setup.tb.Helper()
	n.proc = n.setup.launch(n.Name, "patroni", n.config)
}

// Kill ends the node as a lost machine would: SIGKILL to Patroni, to the
// postmaster and to every process the postmaster started.
func (n *PatroniNode) Kill() { n.end(func(p *lockenv.Process) { p.Kill() }) }

// Stop ends Patroni with SIGTERM, which stops its PostgreSQL (fast), and
// waits for both.
func (n *PatroniNode) Stop() { n.end(func(p *lockenv.Process) { _ = p.Stop(30 * time.Second) }) }

// end ends Patroni by stop, then whatever is left of its PostgreSQL.
func (n *PatroniNode) end(stop func(*lockenv.Process)) {
	if n.proc != nil {
		stop(n.proc)
	}
	if pid := n.postmaster(); pid > 0 {
		devenv.KillTree(pid)
	}
}

// Log returns the last lines of the node's Patroni log, for a failure's
// message.
func (n *PatroniNode) Log(lines int) string {
	if n.proc == nil {
		return "(never started)"
	}
	return n.proc.Tail(lines)
}

// postmaster returns the pid in the data directory's postmaster.pid when
// that process runs, else 0.
func (n *PatroniNode) postmaster() int {
	b, err := os.ReadFile(filepath.Join(n.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// Leader returns the node that is primary now, or nil.
func (s *PatroniSetup) Leader() *PatroniNode {
	for _, n := range s.Nodes {
		if devenv.Leads(n.API) {
			return n
		}
	}
	return nil
}

// Other returns the node that is not n.
func (s *PatroniSetup) Other(n *PatroniNode) *PatroniNode {
	if s.Nodes[0] == n {
		return s.Nodes[1]
	}
	return s.Nodes[0]
}

// AwaitLeader waits until n is the running primary.
func (s *PatroniSetup) AwaitLeader(ctx context.Context, n *PatroniNode) {
	s.tb.Helper()
	s.await(ctx, n.Name+" leading", func() (bool, error) { return devenv.Leads(n.API), nil })
}

// AwaitSyncStandby waits until n streams from the primary as its
// synchronous standby: commits wait for it again.
func (s *PatroniSetup) AwaitSyncStandby(ctx context.Context, n *PatroniNode) {
	s.tb.Helper()
	s.await(ctx, n.Name+" as the synchronous standby", func() (bool, error) {
		leader := s.Leader()
		return leader != nil && leader != n && devenv.SyncStandby(n.API, n.Name, leader.API), nil
	})
}

// Switchover asks Patroni for a planned switchover to candidate (the
// primary stops, the standby is promoted once it has every commit, and the
// old primary follows it) and returns once candidate leads.
func (s *PatroniSetup) Switchover(ctx context.Context, candidate *PatroniNode) {
	s.tb.Helper()
	leader := s.Other(candidate)
	if err := devenv.Switchover(ctx, leader.API, leader.Name, candidate.Name); err != nil {
		s.tb.Fatal(err)
	}
	s.AwaitLeader(ctx, candidate)
}

func (s *PatroniSetup) nodeURL(n *PatroniNode, db string) string {
	return fmt.Sprintf("postgres://postgres:%s@%s/%s?sslmode=disable", s.password, n.Addr, db)
}

// launch starts bin with args as the PostgreSQL user, its output in
// name.log; the test fails if it cannot.
func (s *PatroniSetup) launch(name, bin string, args ...string) *lockenv.Process {
	s.tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+s.dir)
	p, err := lockenv.Launch(name, filepath.Join(s.dir, name+".log"), syscall.SIGTERM, s.cred, cmd)
	if err != nil {
		s.tb.Fatal(err)
	}
	return p
}

// stop kills every process and deletes the directory.
func (s *PatroniSetup) stop() {
	for _, n := range s.Nodes {
		n.Kill()
	}
	if s.etcd != nil {
		s.etcd.Kill()
	}
	_ = os.RemoveAll(s.dir)
}

// writeFile writes a file the PostgreSQL user owns (Patroni reads its
// configuration as that user).
func (s *PatroniSetup) writeFile(path, text string) {
	s.tb.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		s.tb.Fatal(err)
	}
	if s.cred != nil {
		if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			s.tb.Fatal(err)
		}
	}
}

func (s *PatroniSetup) await(ctx context.Context, what string, ready func() (bool, error)) {
	s.tb.Helper()
	await(s.tb, ctx, what, ready, func() string {
		var logs strings.Builder
		for _, n := range s.Nodes {
			fmt.Fprintf(&logs, "\n%s:\n%s", n.Name, n.Log(15))
		}
		return logs.String()
	})
}
