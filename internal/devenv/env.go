package devenv

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// Env is what DIR/env says: where `make run`'s Redis and PostgreSQL listen,
// their secrets, and the service's settings for them.
type Env struct {
	RedisPort  int
	PGPort     int
	PGPassword string
	// PGDir is where the PostgreSQL cluster lives: DIR/pg, or a directory
	// under the postgres user's home (see the package's doc).
	PGDir       string
	RedisURL    string
	DatabaseURL string
	AuthSecret  string
}

// envPath is the file of DIR's settings.
func envPath(dir string) string { return filepath.Join(dir, "env") }

// newEnv chooses DIR's ports (those given, when not 0) and secrets.
func newEnv(dir string, redisPort, pgPort int) (Env, error) {
	var err error
	for _, port := range []*int{&redisPort, &pgPort} {
		if *port == 0 {
			if *port, err = lockenv.FreePort(); err != nil {
				return Env{}, err
			}
		}
	}
	pgDir, err := pgHome(dir)
	if err != nil {
		return Env{}, err
	}
	password := randomHex(16)
	return Env{
		RedisPort:   redisPort,
		PGPort:      pgPort,
		PGPassword:  password,
		PGDir:       pgDir,
		RedisURL:    fmt.Sprintf("redis://127.0.0.1:%d/0", redisPort),
		DatabaseURL: fmt.Sprintf("postgres://seatlock:%s@127.0.0.1:%d/seatlock?sslmode=disable", password, pgPort),
		AuthSecret:  randomHex(32),
	}, nil
}

// LoadEnv reads DIR/env, which Start wrote; an error when there is none
// says to start the servers first.
func LoadEnv(dir string) (Env, error) {
	vars, err := readEnvFile(envPath(dir))
	if err != nil {
		return Env{}, fmt.Errorf("no servers under %s (devenv start %s first): %w", dir, dir, err)
	}
	e := Env{
		PGPassword:  vars["PG_PASSWORD"],
		PGDir:       vars["PG_DIR"],
		RedisURL:    vars["REDIS_URL"],
		DatabaseURL: vars["DATABASE_URL"],
		AuthSecret:  vars["AUTH_SECRET"],
	}
	if e.PGDir == "" {
		e.PGDir = filepath.Join(dir, "pg")
	}
	for name, port := range map[string]*int{"REDIS_PORT": &e.RedisPort, "PG_PORT": &e.PGPort} {
		if *port, err = strconv.Atoi(vars[name]); err != nil {
			return Env{}, fmt.Errorf("%s: %s is not a port: %q", envPath(dir), name, vars[name])
		}
	}
	return e, nil
}

// Environ is the service's settings for these servers, as NAME=VALUE
// entries for a process's environment.
func (e Env) Environ() []string {
	return []string{"REDIS_URL=" + e.RedisURL, "DATABASE_URL=" + e.DatabaseURL, "AUTH_SECRET=" + e.AuthSecret}
}

func (e Env) write(dir string) error {
	return writeEnvFile(envPath(dir), []setting{
		{"REDIS_PORT", strconv.Itoa(e.RedisPort)},
		{"PG_PORT", strconv.Itoa(e.PGPort)},
		{"PG_PASSWORD", e.PGPassword},
		{"PG_DIR", e.PGDir},
		{"REDIS_URL", e.RedisURL},
		{"DATABASE_URL", e.DatabaseURL},
		{"AUTH_SECRET", e.AuthSecret},
	})
}
