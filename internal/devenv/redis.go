package devenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// startRedis starts a redis-server on port, in dir, keeping nothing on
// disk (locks are leases that must not outlive their TTL anyway), as a
// daemon recorded in dir/redis.pid and logging to dir/redis.log, with
// more arguments after those; unless that pid file names one that runs.
// It reports whether it started one, and waits until the server answers.
func startRedis(dir string, port int, more ...string) (started bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	if runningFrom(filepath.Join(dir, "redis.pid")) == 0 {
		started = true
		daemon := append([]string{"--daemonize", "yes",
			"--pidfile", filepath.Join(dir, "redis.pid"), "--logfile", filepath.Join(dir, "redis.log")}, more...)
		// A later argument overrides an earlier one: --daemonize yes,
		// RedisArgs's no.
		out, err := exec.Command("redis-server", lockenv.RedisArgs(strconv.Itoa(port), dir, daemon...)...).CombinedOutput()
		if err != nil {
			return started, fmt.Errorf("redis-server on port %d: %w: %s", port, err, out)
		}
	}
	return started, awaitRedis(port, filepath.Join(dir, "redis.log"))
}

// awaitRedis waits up to 10 s for the Redis on port to answer PING; it
// fails with the end of its log, which says why (say, the port was
// taken).
func awaitRedis(port int, log string) error {
	client := redis.NewClient(&redis.Options{Addr: hostPort(port), MaxRetries: -1, DialTimeout: time.Second})
	defer func() { _ = client.Close() }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
	}
	return fmt.Errorf("redis on port %d did not answer (see %s):\n%s", port, log, tail(log, 5))
}
