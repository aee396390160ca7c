package devenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// stopPair stops DIR's Patroni nodes, the standby before the leader (so
// that no standby is promoted as the leader goes), each with SIGTERM:
// Patroni stops its PostgreSQL, then exits. A PostgreSQL whose Patroni is
// gone (killed) is stopped with pg_ctl. Then etcd. It returns what it
// stopped, and notes on what would not stop.
func stopPair(dir string) (stopped, notes []string) {
	p, err := LoadPair(dir)
	if err != nil {
		return nil, nil
	}
	var order []PairNode
	leader := p.Leader()
	for _, n := range p.Nodes {
		if leader == nil || n.Name != leader.Name {
			order = append(order, n)
		}
	}
	if leader != nil {
		order = append(order, *leader)
	}
	for _, n := range order {
		if pid := p.runs(n.Name); terminate(pid) {
			if !waitGone(pid, 60*time.Second) {
				notes = append(notes, fmt.Sprintf("Patroni %s (pid %d) still runs 60 s after SIGTERM", n.Name, pid))
			}
			stopped = append(stopped, fmt.Sprintf("Patroni %s and its PostgreSQL (pid %d, port %d)", n.Name, pid, n.Port))
		}
		if pg, err := p.postgres(n); err == nil && pg.running() && pg.stop() {
			stopped = append(stopped, fmt.Sprintf("%s's PostgreSQL, whose Patroni was gone (port %d)", n.Name, n.Port))
		}
	}
	if pids := stopPidfiles(p.pidPath("etcd")); len(pids) > 0 {
		stopped = append(stopped, fmt.Sprintf("etcd (pid %s, port %d)", joinPids(pids), p.EtcdPort))
	}
	return stopped, notes
}

// purgePair deletes what stopPair's servers kept: their data (PGHA_DIR
// wherever it lives, when made for DIR), etcd's, the configurations and
// DIR/pgha/env; the logs stay.
func purgePair(dir string) error {
	home := pairHome(dir)
	if _, err := os.Stat(home); err != nil {
		return nil
	}
	var left error
	if vars, err := readEnvFile(filepath.Join(home, "env")); err == nil && vars["PGHA_DIR"] != "" && vars["PGHA_DIR"] != home {
		left = removeData(dir, vars["PGHA_DIR"])
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".log") {
			if err := os.RemoveAll(filepath.Join(home, e.Name())); err != nil {
				return err
			}
		}
	}
	return left
}
