// Command devenv is the service's local topology (internal/devenv) on the
// command line, run from the repository's root as `go run ./cmd/devenv`:
//
//	devenv install                  install redis-server, redis-sentinel, PostgreSQL, Patroni and
//	                                etcd from the OS packages if missing
//	devenv browser                  install Chromium from the OS packages if missing (the browser test)
//	devenv haproxy                  install HAProxy from the OS packages if missing (make cluster)
//	devenv port                     print a free port (below the ephemeral range)
//	devenv start DIR [RPORT PPORT]  start (or reuse) make run's Redis and PostgreSQL with their data
//	                                under DIR; writes DIR/env on first use
//	devenv sentinel DIR             give DIR's Redis a replica and three Sentinels; writes DIR/sentinel/env
//	devenv patroni DIR              start (or reuse) a PostgreSQL pair under Patroni and one etcd;
//	                                writes DIR/pgha/env
//	devenv stop DIR                 stop what runs for DIR: make run's API, make cluster's
//	                                instances and HAProxy, the Sentinels, Redis, PostgreSQL,
//	                                the Patroni nodes and etcd
//	devenv purge DIR                stop DIR's servers and delete their data (the PostgreSQL
//	                                clusters wherever they live, Redis's, etcd's, DIR/env); other files stay
//	devenv remove DIR               purge DIR, then delete DIR
//	devenv orphans                  delete the clusters kept under the postgres user's home whose
//	                                directory is gone and that do not run
//	devenv run DIR                  make run: DIR's servers, then the API in the foreground on HTTP_ADDR
//	devenv smoke DIR                make smoke: api.http in httpyac against the served address, or
//	                                against a service started for it on DIR's servers
//	devenv served-addr DIR          the address make run or make cluster serves on (HTTP_ADDR first)
//	devenv cluster up DIR           make cluster, in the foreground until Ctrl-C or SIGTERM
//	devenv cluster roll DIR         restart the instances one by one
//	devenv cluster failover DIR     the Sentinels promote the replica
//	devenv cluster pg-switchover DIR
//	                                Patroni hands the lead to the synchronous standby
//	devenv cluster pg-failover DIR  SIGKILL the leading node; the standby leads; the node comes back
//
// pg-switchover and pg-failover tell what they do on stderr and end with
// one line on stdout: promotedAfterMs=N rejoinedAfterMs=N leader=pgN
// (internal/devenv's PGChange).
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/seatlock/seatlock/internal/devenv"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	if err := dispatch(os.Args[1], os.Args[2:]); err != nil {
		var code exitCode
		if errors.As(err, &code) {
			os.Exit(int(code))
		}
		who := "devenv"
		if os.Args[1] == "cluster" {
			who = "cluster"
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", who, err)
		os.Exit(1)
	}
}

func dispatch(cmd string, args []string) error {
	say := os.Stderr
	switch cmd {
	case "install":
		return devenv.Install(say, devenv.Servers)
	case "browser":
		return devenv.Install(say, devenv.Browser)
	case "haproxy":
		return devenv.Install(say, devenv.HAProxy)
	case "port":
		port, err := lockenv.FreePort()
		if err == nil {
			fmt.Println(port)
		}
		return err
	case "orphans":
		return devenv.Orphans(say)
	case "cluster":
		if len(args) != 2 {
			usage()
		}
		return cluster(args[0], args[1])
	}
	if len(args) < 1 {
		usage()
	}
	dir := args[0]
	switch cmd {
	case "start":
		return start(dir, args[1:])
	case "sentinel":
		_, err := devenv.Sentinel(dir)
		return err
	case "patroni":
		_, err := devenv.Patroni(dir, say)
		return err
	case "stop":
		return devenv.Stop(dir, say)
	case "purge":
		return devenv.Purge(dir, say)
	case "remove":
		return devenv.Remove(dir, say)
	case "run":
		return run(dir)
	case "smoke":
		return smoke(dir)
	case "served-addr":
		fmt.Println(devenv.ServedAddr(dir))
		return nil
	}
	usage()
	return nil
}

// start is `devenv start DIR [RPORT PPORT]`.
func start(dir string, ports []string) error {
	var redisPort, pgPort int
	if len(ports) == 2 {
		var err error
		if redisPort, err = strconv.Atoi(ports[0]); err != nil {
			return fmt.Errorf("RPORT %q: %w", ports[0], err)
		}
		if pgPort, err = strconv.Atoi(ports[1]); err != nil {
			return fmt.Errorf("PPORT %q: %w", ports[1], err)
		}
	} else if len(ports) != 0 {
		usage()
	}
	_, err := devenv.StartWith(dir, redisPort, pgPort)
	return err
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: go run ./cmd/devenv COMMAND
  install | browser | haproxy | port | orphans
  start DIR [RPORT PPORT] | sentinel DIR | patroni DIR | stop DIR | purge DIR | remove DIR
  run DIR | smoke DIR | served-addr DIR
  cluster up|roll|failover|pg-switchover|pg-failover DIR
(go doc ./cmd/devenv says what each does)
`)
	os.Exit(2)
}

func logf(who, format string, args ...any) {
	fmt.Fprintf(os.Stderr, who+": "+format+"\n", args...)
}
