package devenv

import (
	"fmt"
	"strings"
)

// PatroniScope is the name the Patroni nodes of a pair share in etcd (the
// cluster's name in patronictl).
const PatroniScope = "seatlock"

// PatroniConfig is one Patroni node's configuration: a PostgreSQL in
// synchronous mode (synchronous_commit on, the standby named in
// synchronous_standby_names) with the failover timings below.
type PatroniConfig struct {
	Name    string // pg1, pg2
	Addr    string // its PostgreSQL's host:port
	REST    string // its REST API's host:port
	Etcd    string // etcd's client host:port
	DataDir string
	BinDir  string // PostgreSQL's binaries (lockenv.PostgresBin)
	PGPass  string // the file Patroni writes its replication password to
	// The passwords of the superuser postgres, of replicator (streaming)
	// and of rewinder (pg_rewind).
	Superuser, Replication, Rewind string
	// NoFsync turns fsync off: for a test, which kills processes, never
	// the machine, and the page cache outlives a process.
	NoFsync bool
}

// YAML is the node's configuration text, which Patroni reads from a file
// or from PATRONI_CONFIGURATION.
func (c PatroniConfig) YAML() string {
	fsync := ""
	if c.NoFsync {
		fsync = "\n        fsync: \"off\""
	}
	return fmt.Sprintf(`scope: %s
name: %s
restapi:
  listen: %s
  connect_address: %[3]s
etcd3:
  hosts: %s
bootstrap:
  dcs:
    # A leader that stops renewing its key in etcd loses it after ttl
    # seconds; then its synchronous standby takes it.
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 16777216
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: "on"
        max_connections: 300
        synchronous_commit: "on"%s
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: scram-sha-256
postgresql:
  listen: %s
  connect_address: %[6]s
  data_dir: %s
  bin_dir: %s
  pgpass: %s
  parameters:
    unix_socket_directories: ''
  pg_hba:
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
  authentication:
    superuser:
      username: postgres
      password: %s
    replication:
      username: replicator
      password: %s
    rewind:
      username: rewinder
      password: %s
`, PatroniScope, c.Name, c.REST, c.Etcd, fsync, c.Addr, c.DataDir, c.BinDir, c.PGPass,
		yamlString(c.Superuser), yamlString(c.Replication), yamlString(c.Rewind))
}

// yamlString quotes s as a YAML string: a password read as a number (all
// digits) or a boolean would not be the password.
func yamlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// EtcdArgs are the arguments of a single-member etcd with its data in
// dataDir, serving clients on client and its peer on peer (host:port),
// without fsync: a development etcd on one machine, whose crash would
// lose the nodes with it anyway.
func EtcdArgs(dataDir, client, peer string) []string {
	return []string{"--name", "e1", "--data-dir", dataDir,
		"--listen-client-urls", "http://" + client, "--advertise-client-urls", "http://" + client,
		"--listen-peer-urls", "http://" + peer, "--initial-advertise-peer-urls", "http://" + peer,
		"--initial-cluster", "e1=http://" + peer, "--initial-cluster-state", "new", "--unsafe-no-fsync"}
}
