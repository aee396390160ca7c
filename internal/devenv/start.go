package devenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Start starts `make run`'s Redis and PostgreSQL for DIR, or finds them
// running, and returns DIR/env's settings. The first start of DIR chooses
// free ports and fresh secrets and writes them to DIR/env; later ones
// reuse them, and the data. It installs the servers first when missing
// (saying so on stderr). A start that fails stops the servers it started.
func Start(dir string) (Env, error) { return StartWith(dir, 0, 0) }

// StartWith is Start with the ports of a first start given (0: a free
// one); once DIR/env exists, its ports are kept.
func StartWith(dir string, redisPort, pgPort int) (Env, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Env{}, err
	}
	if err := Install(os.Stderr, Servers); err != nil {
		return Env{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Env{}, err
	}
	// The postgres user must pass through it to reach DIR/pg.
	if err := os.Chmod(dir, 0o755); err != nil {
		return Env{}, err
	}
	if _, err := os.Stat(envPath(dir)); errors.Is(err, os.ErrNotExist) {
		e, err := newEnv(dir, redisPort, pgPort)
		if err != nil {
			return Env{}, err
		}
		if err := e.write(dir); err != nil {
			return Env{}, err
		}
	}
	e, err := LoadEnv(dir)
	if err != nil {
		return Env{}, err
	}
	redisStarted, err := startRedis(filepath.Join(dir, "redis"), e.RedisPort)
	if err != nil {
		return Env{}, stopStarted(dir, e, err, redisStarted, false)
	}
	pgStarted, err := startPostgres(dir, e)
	if err != nil {
		return Env{}, stopStarted(dir, e, err, redisStarted, pgStarted)
	}
	return e, nil
}

// stopStarted stops the servers a start that failed with err had started,
// and says so in the error it returns: a failed start leaves nothing
// running behind it.
func stopStarted(dir string, e Env, err error, redis, pg bool) error {
	if redis && terminate(readPid(filepath.Join(dir, "redis", "redis.pid"))) {
		err = fmt.Errorf("%w\n(stopped the Redis this start had started)", err)
	}
	if server, perr := newPostgres(filepath.Join(e.PGDir, "data")); pg && perr == nil && server.stop() {
		err = fmt.Errorf("%w\n(stopped the PostgreSQL this start had started)", err)
	}
	return err
}
