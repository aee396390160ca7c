package devenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Pair is what DIR/pgha/env says of `make cluster`'s PostgreSQL pair: two
// Patroni nodes, pg1 and pg2, each running a PostgreSQL, and one etcd for
// their leader election.
type Pair struct {
	// Data is where the nodes keep their data (PGHA_DIR): DIR/pgha, or
	// beside make run's cluster under the postgres user's home.
	Data         string
	EtcdPort     int
	EtcdPeerPort int
	Nodes        []PairNode // pg1 (which bootstraps a fresh pair), pg2
	// The passwords of the service's role seatlock, and of Patroni's
	// superuser, replication and rewind users.
	Password, SuperuserPassword, ReplicationPassword, RewindPassword string
	// DatabaseURL is the service's: both nodes, target_session_attrs=read-write.
	DatabaseURL string
	home        string // DIR/pgha: the env file, configurations, logs, pid files, etcd's data
}

// PairNode is one node of the pair.
type PairNode struct {
	Name     string
	Port     int // its PostgreSQL's
	RESTPort int // its Patroni REST API's
}

// Addr is the node's PostgreSQL, host:port.
func (n PairNode) Addr() string { return hostPort(n.Port) }

// REST is the node's Patroni REST API, http://host:port.
func (n PairNode) REST() string { return "http://" + hostPort(n.RESTPort) }

// The pair's nodes, in the order a fresh pair starts them (pg1
// bootstraps).
var pairNodes = [...]string{"pg1", "pg2"}

func pairHome(dir string) string { return filepath.Join(dir, "pgha") }

func newPair(dir string) (Pair, error) {
	ports, err := freePorts(6)
	if err != nil {
		return Pair{}, err
	}
	data, err := pgHAHome(dir)
	if err != nil {
		return Pair{}, err
	}
	p := Pair{Data: data, EtcdPort: ports[0], EtcdPeerPort: ports[1], Password: randomHex(16),
		SuperuserPassword: randomHex(16), ReplicationPassword: randomHex(16), RewindPassword: randomHex(16),
		home: pairHome(dir)}
	for i, name := range pairNodes {
		p.Nodes = append(p.Nodes, PairNode{Name: name, Port: ports[2+i], RESTPort: ports[4+i]})
	}
	p.DatabaseURL = fmt.Sprintf("postgres://seatlock:%s@%s,%s/seatlock?sslmode=disable&target_session_attrs=read-write",
		p.Password, p.Nodes[0].Addr(), p.Nodes[1].Addr())
	return p, nil
}

func (p Pair) write() error {
	s := []setting{
		{"PGHA_DIR", p.Data},
		{"PGHA_ETCD_PORT", strconv.Itoa(p.EtcdPort)},
		{"PGHA_ETCD_PEER_PORT", strconv.Itoa(p.EtcdPeerPort)},
	}
	var configs, urls []string
	for _, n := range p.Nodes {
		s = append(s, setting{"PGHA_" + strings.ToUpper(n.Name) + "_PORT", strconv.Itoa(n.Port)})
		configs = append(configs, p.configPath(n))
		urls = append(urls, n.REST())
	}
	for _, n := range p.Nodes {
		s = append(s, setting{"PGHA_" + strings.ToUpper(n.Name) + "_REST_PORT", strconv.Itoa(n.RESTPort)})
	}
	for _, n := range p.Nodes {
		s = append(s, setting{"PGHA_" + strings.ToUpper(n.Name) + "_REST", n.REST()})
	}
	s = append(s,
		setting{"PGHA_PASSWORD", p.Password},
		setting{"PGHA_SUPERUSER_PASSWORD", p.SuperuserPassword},
		setting{"PGHA_REPLICATION_PASSWORD", p.ReplicationPassword},
		setting{"PGHA_REWIND_PASSWORD", p.RewindPassword},
		setting{"DATABASE_URL", p.DatabaseURL},
		setting{"PATRONI_CONFIGS", strings.Join(configs, " ")},
		setting{"PATRONI_URLS", strings.Join(urls, " ")},
		setting{"ETCD_URL", "http://" + hostPort(p.EtcdPort)},
	)
	return writeEnvFile(filepath.Join(p.home, "env"), s)
}

// LoadPair reads DIR/pgha/env, which Patroni wrote.
func LoadPair(dir string) (Pair, error) {
	home := pairHome(dir)
	vars, err := readEnvFile(filepath.Join(home, "env"))
	if err != nil {
		return Pair{}, fmt.Errorf("no PostgreSQL pair under %s (make cluster first): %w", dir, err)
	}
	p := Pair{Data: vars["PGHA_DIR"], Password: vars["PGHA_PASSWORD"], SuperuserPassword: vars["PGHA_SUPERUSER_PASSWORD"],
		ReplicationPassword: vars["PGHA_REPLICATION_PASSWORD"], RewindPassword: vars["PGHA_REWIND_PASSWORD"],
		DatabaseURL: vars["DATABASE_URL"], home: home}
	number := func(name string) int {
		n, perr := strconv.Atoi(vars[name])
		if perr != nil && err == nil {
			err = fmt.Errorf("%s/env: %s is not a port: %q", home, name, vars[name])
		}
		return n
	}
	p.EtcdPort, p.EtcdPeerPort = number("PGHA_ETCD_PORT"), number("PGHA_ETCD_PEER_PORT")
	for _, name := range pairNodes {
		upper := "PGHA_" + strings.ToUpper(name)
		p.Nodes = append(p.Nodes, PairNode{Name: name, Port: number(upper + "_PORT"), RESTPort: number(upper + "_REST_PORT")})
	}
	return p, err
}

func (p Pair) configPath(n PairNode) string { return filepath.Join(p.home, n.Name+".yml") }
func (p Pair) pidPath(name string) string   { return filepath.Join(p.home, name+".pid") }
func (p Pair) logPath(name string) string   { return filepath.Join(p.home, name+".log") }

// config is node n's Patroni configuration.
func (p Pair) config(n PairNode, bin string) PatroniConfig {
	return PatroniConfig{Name: n.Name, Addr: n.Addr(), REST: hostPort(n.RESTPort), Etcd: hostPort(p.EtcdPort),
		DataDir: filepath.Join(p.Data, n.Name), BinDir: bin, PGPass: filepath.Join(p.Data, "pgpass-"+n.Name),
		Superuser: p.SuperuserPassword, Replication: p.ReplicationPassword, Rewind: p.RewindPassword}
}

// Leader returns the node that leads now (Leads), or nil.
func (p Pair) Leader() *PairNode {
	for i := range p.Nodes {
		if Leads(p.Nodes[i].REST()) {
			return &p.Nodes[i]
		}
	}
	return nil
}

// Other returns the node of the pair that is not n.
func (p Pair) Other(n PairNode) PairNode {
	if p.Nodes[0].Name == n.Name {
		return p.Nodes[1]
	}
	return p.Nodes[0]
}

// runs returns the pid of what name names (etcd, or a node's Patroni)
// when it runs, else 0.
func (p Pair) runs(name string) int { return runningFrom(p.pidPath(name)) }

// postgres is node n's PostgreSQL, for pg_ctl when its Patroni is gone.
func (p Pair) postgres(n PairNode) (postgres, error) {
	return newPostgres(filepath.Join(p.Data, n.Name))
}

// fresh reports whether no node has data yet.
func (p Pair) fresh() bool {
	for _, n := range p.Nodes {
		if _, err := os.Stat(filepath.Join(p.Data, n.Name, "PG_VERSION")); err == nil {
			return false
		}
	}
	return true
}
