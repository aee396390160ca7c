package lockenv

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The variables that name the shared servers. Each one unset means a
// server of the test binary's own, started on first use (see Run).
const (
	redisEnv    = "TEST_REDIS_URL"
	clusterEnv  = "TEST_REDIS_CLUSTER_URL"
	databaseEnv = "TEST_DATABASE_URL"
)

// M is what a TestMain runs: a *testing.M, or a wrapper of one.
// goleak.TestingM is the same interface.
type M interface{ Run() int }

// Run runs a package's tests (m.Run) in the test environment and exits
// with their code. Call it from the TestMain of every package whose tests
// use the shared servers (Redis, RedisCluster, DatabaseURL...):
//
//	func TestMain(m *testing.M) { lockenv.Run(m) }
//
// A server named by its TEST_* variable is used as it is. One not named
// is started by the test binary itself the first time a test asks for it
// (redis-server, three redis-server nodes joined into a Redis Cluster, or
// a PostgreSQL cluster, on free ports in a temporary directory) and
// stopped, its directory deleted, once the tests are over: `go test
// ./...` needs no set-up beyond the installed binaries. When a binary is
// missing, the tests that need it fail, never skip, saying so.
func Run(m M) { os.Exit(Wrap(m).Run()) }

// Wrap returns m with the test environment of Run around its Run, for a
// TestMain that hands m on:
//
//	goleak.VerifyTestMain(lockenv.Wrap(m), lockenv.ProxyGoroutines()...)
//
// looks for leaked goroutines once the servers are stopped.
func Wrap(m M) M { return wrapped{m} }

type wrapped struct{ m M }

func (w wrapped) Run() int {
	shared.mu.Lock()
	shared.active = true
	shared.mu.Unlock()
	code := w.m.Run()
	if err := shared.stop(); err != nil {
		fmt.Fprintf(os.Stderr, "lockenv: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// shared holds the servers this test binary started.
var shared servers

type servers struct {
	mu      sync.Mutex
	active  bool              // within Wrap's Run
	dir     string            // where their data and logs are
	pgDir   string            // PostgreSQL's, when it could not be under dir
	started []*Process        // in the order they started
	urls    map[string]string // by variable
	errs    map[string]error  // why one could not start (no second try)
}

// URL returns the URL of the shared server that the variable env names
// (TEST_REDIS_URL, TEST_REDIS_CLUSTER_URL or TEST_DATABASE_URL): its value
// when set, else that of the test binary's own server, started now if it
// is not running yet. Only within Run (or Wrap's Run). Tests use
// RedisURL, RedisClusterURL or DatabaseURL; URL is for work a TestMain
// does itself, outside any test.
func URL(env string) (string, error) {
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	url, err := shared.url(env)
	if err != nil {
		return "", fmt.Errorf("%s is not set, and no server of the test binary's own: %w", env, err)
	}
	return url, nil
}

// serverURL is URL for a test, which fails when there is no server.
func serverURL(tb testing.TB, env string) string {
	tb.Helper()
	url, err := URL(env)
	if err != nil {
		tb.Fatal(err)
	}
	return url
}

func (s *servers) url(env string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active {
		return "", errors.New("this package's TestMain must call lockenv.Run(m) (or run lockenv.Wrap(m)), which starts the servers its tests use and stops them after")
	}
	if url, ok := s.urls[env]; ok {
		return url, nil
	}
	if err, ok := s.errs[env]; ok {
		return "", err
	}
	url, err := s.start(env)
	if err != nil {
		if s.errs == nil {
			s.errs = make(map[string]error)
		}
		s.errs[env] = err
		return "", err
	}
	if s.urls == nil {
		s.urls = make(map[string]string)
	}
	s.urls[env] = url
	return url, nil
}

func (s *servers) start(env string) (string, error) {
	if s.dir == "" {
		dir, err := os.MkdirTemp("", "lockenv-")
		if err != nil {
			return "", err
		}
		s.dir = dir
	}
	switch env {
	case redisEnv:
		return s.startRedis()
	case clusterEnv:
		return s.startCluster()
	case databaseEnv:
		return s.startPostgres()
	}
	return "", fmt.Errorf("no server for %s", env)
}

// stop stops every server started, last first, and deletes their
// directories.
func (s *servers) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = false
	var errs []error
	for i := len(s.started) - 1; i >= 0; i-- {
		if err := s.started[i].Stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	s.started = nil
	for _, dir := range []string{s.pgDir, s.dir} {
		if dir == "" {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	s.dir, s.pgDir, s.urls, s.errs = "", "", nil, nil
	return errors.Join(errs...)
}
