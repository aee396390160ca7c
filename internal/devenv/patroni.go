package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// Patroni starts DIR's PostgreSQL pair, or what of it does not run: etcd
// and the Patroni nodes pg1 and pg2 (as the postgres user when root), each
// on a port chosen once and kept in DIR/pgha/env with its secrets. A fresh
// pair starts pg1 first and waits for it to lead, so that pg1 bootstraps
// and pg2 copies it; what already runs is kept (after a failover pg2 may
// lead). It returns once a node leads and the other streams as its
// synchronous standby, with the service's role and database made on the
// leader. A start that fails stops what it started, and only that.
func Patroni(dir string, say io.Writer) (Pair, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Pair{}, err
	}
	if err := Install(say, Servers); err != nil {
		return Pair{}, err
	}
	bin, err := lockenv.PostgresBin()
	if err != nil {
		return Pair{}, err
	}
	cred, err := lockenv.PostgresUser()
	if err != nil {
		return Pair{}, err
	}
	home := pairHome(dir)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return Pair{}, err
	}
	if err := os.Chmod(home, 0o755); err != nil {
		return Pair{}, err
	}
	if _, err := os.Stat(filepath.Join(home, "env")); errors.Is(err, os.ErrNotExist) {
		p, err := newPair(dir)
		if err != nil {
			return Pair{}, err
		}
		if err := p.write(); err != nil {
			return Pair{}, err
		}
	}
	p, err := LoadPair(dir)
	if err != nil {
		return Pair{}, err
	}
	if err := ownData(dir, p.Data, cred); err != nil {
		return Pair{}, err
	}
	for _, n := range p.Nodes {
		// For patronictl -c; Patroni itself reads the text from its
		// environment.
		if err := os.WriteFile(p.configPath(n), []byte(p.config(n, bin).YAML()), 0o600); err != nil {
			return Pair{}, err
		}
	}
	s := &pairStart{Pair: p, bin: bin, cred: cred}
	if err := s.run(); err != nil {
		return Pair{}, s.stopStarted(err)
	}
	return p, nil
}

// pairStart is one start of the pair, and what it started.
type pairStart struct {
	Pair
	bin     string
	cred    *syscall.Credential
	started []string // "etcd", node names, in order
}

func (s *pairStart) run() error {
	fresh := s.fresh()
	if err := s.startEtcd(); err != nil {
		return err
	}
	for _, n := range s.Nodes {
		d, err := s.startPatroni(n)
		if err != nil {
			return err
		}
		if fresh && d != nil {
			// pg1 initialises the cluster; the other copies it once it
			// leads.
			if err := d.await("leading", 90*time.Second, func() bool { return Leads(n.REST()) }); err != nil {
				return err
			}
			fresh = false
		}
	}
	leader, err := s.await(90 * time.Second)
	if err != nil {
		return err
	}
	return s.makeRole(leader)
}

// startEtcd starts the pair's etcd, a single member, unless it runs.
func (s *pairStart) startEtcd() error {
	if s.runs("etcd") != 0 {
		return nil
	}
	client, peer := hostPort(s.EtcdPort), hostPort(s.EtcdPeerPort)
	d, err := detach("etcd", s.logPath("etcd"), s.pidPath("etcd"), nil,
		exec.Command("etcd", EtcdArgs(filepath.Join(s.home, "etcd"), client, peer)...))
	if err != nil {
		return err
	}
	s.started = append(s.started, "etcd")
	return d.await("healthy", 10*time.Second, func() bool { return EtcdHealthy(client) })
}

// startPatroni starts node n's Patroni, which starts its PostgreSQL,
// unless it runs; it returns the process it started, or nil. Patroni
// reads its configuration from PATRONI_CONFIGURATION, so that the postgres
// user, who may not reach DIR, needs no access to a file there.
func (s *pairStart) startPatroni(n PairNode) (*detached, error) {
	if s.runs(n.Name) != 0 {
		return nil, nil
	}
	cmd := exec.Command("patroni")
	cmd.Env = append(os.Environ(), "PATRONI_CONFIGURATION="+s.config(n, s.bin).YAML())
	if s.cred != nil {
		home, err := postgresHome()
		if err != nil {
			return nil, err
		}
		cmd.Env = append(cmd.Env, "HOME="+home)
	}
	d, err := detach("Patroni "+n.Name, s.logPath(n.Name), s.pidPath(n.Name), s.cred, cmd)
	if err != nil {
		return nil, err
	}
	s.started = append(s.started, n.Name)
	return d, nil
}

// await waits until a node leads and every other one streams as its
// synchronous standby, and returns the leader; it fails when a Patroni
// process ends meanwhile.
func (s *pairStart) await(within time.Duration) (PairNode, error) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, n := range s.Nodes {
			if s.runs(n.Name) == 0 {
				return PairNode{}, fmt.Errorf("Patroni %s ended (see %s):\n%s", n.Name, s.logPath(n.Name), tail(s.logPath(n.Name), 20))
			}
		}
		if leader := s.Leader(); leader != nil && SyncStandby(s.Other(*leader).REST(), s.Other(*leader).Name, leader.REST()) {
			return *leader, nil
		}
	}
	var logs strings.Builder
	for _, n := range s.Nodes {
		fmt.Fprintf(&logs, "\n%s:\n%s", s.logPath(n.Name), tail(s.logPath(n.Name), 5))
	}
	return PairNode{}, fmt.Errorf("no leader with a streaming synchronous standby after %v (see %s/*.log)%s", within, s.home, logs.String())
}

// makeRole makes the service's role and database on the leader, unless
// they exist. Under make run's single server the role owns the whole
// cluster; here it is an ordinary role that owns its database and may
// create others, as make compare does for its contenders.
func (s *pairStart) makeRole(leader PairNode) error {
	admin := fmt.Sprintf("postgres://postgres:%s@%s/postgres?sslmode=disable", s.SuperuserPassword, leader.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to the leader %s: %w", leader.Name, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'seatlock')").Scan(&exists); err != nil {
		return err
	}
	if !exists {
		// DDL takes no parameters; the password is hex we made.
		if _, err := conn.Exec(ctx, "CREATE ROLE seatlock LOGIN CREATEDB PASSWORD '"+s.Password+"'"); err != nil {
			return fmt.Errorf("create role seatlock: %w", err)
		}
	}
	return createDatabase(admin, "seatlock", "seatlock")
}

// stopStarted stops what this start had started (the Patroni nodes, each
// stopping its PostgreSQL, then etcd, which they need to stop cleanly),
// and says so in the error it returns.
func (s *pairStart) stopStarted(err error) error {
	var order []string
	etcd := false
	for _, what := range s.started {
		if what == "etcd" {
			etcd = true
		} else {
			order = append(order, what)
		}
	}
	if etcd {
		order = append(order, "etcd")
	}
	for _, what := range order {
		if pid := s.runs(what); terminate(pid) {
			waitGone(pid, 60*time.Second)
			err = fmt.Errorf("%w\n(stopped the %s this start had started)", err, what)
		}
	}
	return err
}
