package devenv

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Purge stops DIR's servers (Stop) and deletes their data: the PostgreSQL
// cluster wherever it lives (PG_DIR), the Patroni nodes' (PGHA_DIR) and
// etcd's, Redis's, the Sentinels', and DIR/env and DIR/pgha/env, so that
// the next start picks new ports and secrets. Logs and other files stay.
// A directory under the postgres user's home is deleted only when its
// origin file names DIR; one that does not is left, and say is told.
// A DIR that does not exist is nothing to purge.
func Purge(dir string, say io.Writer) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pgDir := filepath.Join(dir, "pg")
	if e, err := LoadEnv(dir); err == nil {
		pgDir = e.PGDir
	}
	if err := Stop(dir, nil); err != nil {
		return err
	}
	var errs []error
	for _, err := range []error{removeData(dir, pgDir), purgePair(dir)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	doomed := append([]string{filepath.Join(dir, "pg"), filepath.Join(dir, "redis"), sentinelHome(dir), envPath(dir)},
		glob(filepath.Join(clusterState(dir), "[0-9]*"))...)
	for _, path := range doomed {
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		logf(say, "devenv", "%v", err)
	}
	return nil
}

// Remove purges DIR, then deletes it.
func Remove(dir string, say io.Writer) error {
	if err := Purge(dir, say); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// Orphans deletes the clusters that were kept under the postgres user's
// home for a directory that no longer exists (a clone deleted after `make
// run`) and that do not run, and tells say of each.
func Orphans(say io.Writer) error {
	home, err := postgresHome()
	if err != nil {
		return nil
	}
	for _, data := range glob(filepath.Join(home, "seatlock", "*")) {
		origin := originOf(data)
		if origin == "" {
			continue
		}
		if _, err := os.Stat(origin); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if runs(data) {
			logf(say, "devenv", "kept %s: its origin %s is gone but it still runs", data, origin)
			continue
		}
		if err := os.RemoveAll(data); err != nil {
			return err
		}
		logf(say, "devenv", "deleted %s (%s's cluster; %s is gone)", data, filepath.Base(origin), origin)
	}
	return nil
}

// runs reports whether a PostgreSQL cluster of data runs: make run's
// (data/data) or a Patroni node's (data/pg1, data/pg2).
func runs(data string) bool {
	for _, d := range append([]string{filepath.Join(data, "data")}, glob(filepath.Join(data, "pg[0-9]*"))...) {
		if pg, err := newPostgres(d); err == nil && pg.running() {
			return true
		}
	}
	return false
}
