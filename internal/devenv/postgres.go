package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// postgres is a PostgreSQL cluster run with pg_ctl: make run's, or a
// Patroni node's that outlived its Patroni.
type postgres struct {
	bin  string // the directory of initdb, pg_ctl
	data string
	cred *syscall.Credential // the user it runs as (nil: this process's)
}

func newPostgres(data string) (postgres, error) {
	bin, err := lockenv.PostgresBin()
	if err != nil {
		return postgres{}, err
	}
	cred, err := lockenv.PostgresUser()
	if err != nil {
		return postgres{}, err
	}
	return postgres{bin: bin, data: data, cred: cred}, nil
}

func (pg postgres) exists() bool {
	_, err := os.Stat(filepath.Join(pg.data, "PG_VERSION"))
	return err == nil
}

// running reports whether pg_ctl finds the cluster running.
func (pg postgres) running() bool {
	return pg.exists() && asUser(pg.cred, filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "status").Run() == nil
}

// stop stops the cluster (fast: sessions are ended) and waits, and reports
// whether it was running.
func (pg postgres) stop() bool {
	return pg.exists() && asUser(pg.cred, filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-m", "fast", "-w", "stop").Run() == nil
}

// startPostgres starts (or finds running) make run's PostgreSQL for DIR
// on e's port and in e.PGDir, making the cluster (initdb, the role
// seatlock with e's password) and its database seatlock when new. It
// reports whether it started the server.
func startPostgres(dir string, e Env) (started bool, err error) {
	pg, err := newPostgres(filepath.Join(e.PGDir, "data"))
	if err != nil {
		return false, err
	}
	if err := ownData(dir, e.PGDir, pg.cred); err != nil {
		return false, err
	}
	if !pg.exists() {
		if err := pg.initdb(e.PGDir, e.PGPassword); err != nil {
			return false, err
		}
	}
	if pg.running() {
		return false, nil
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c max_connections=300", e.PGPort, e.PGDir)
	log := filepath.Join(e.PGDir, "server.log")
	if err := asUser(pg.cred, filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-l", log, "-o", opts, "-w", "-t", "60", "start").Run(); err != nil {
		return true, fmt.Errorf("PostgreSQL did not start (see %s):\n%s", log, tail(log, 20))
	}
	return true, createDatabase(fmt.Sprintf("postgres://seatlock:%s@127.0.0.1:%d/postgres?sslmode=disable", e.PGPassword, e.PGPort), "seatlock", "")
}

// initdb makes the cluster, its superuser seatlock with password.
func (pg postgres) initdb(home, password string) error {
	pwfile := filepath.Join(home, ".pw")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	defer func() { _ = os.Remove(pwfile) }()
	if pg.cred != nil {
		if err := os.Chown(pwfile, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
			return err
		}
	}
	log := filepath.Join(home, "initdb.log")
	out, err := asUser(pg.cred, filepath.Join(pg.bin, "initdb"), "-D", pg.data, "-U", "seatlock", "--pwfile="+pwfile,
		"--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8").CombinedOutput()
	_ = os.WriteFile(log, out, 0o644)
	if err != nil {
		return fmt.Errorf("initdb failed (%v):\n%s", err, out)
	}
	return nil
}

// createDatabase makes database name on the server of adminURL, unless it
// exists, owned by owner when not "".
func createDatabase(adminURL, name, owner string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if owner != "" {
		create += " OWNER " + pgx.Identifier{owner}.Sanitize()
	}
	if _, err := conn.Exec(ctx, create); err != nil {
		return fmt.Errorf("%s: %w", create, err)
	}
	return nil
}
