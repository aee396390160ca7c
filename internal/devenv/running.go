package devenv

import "path/filepath"

// RedisRunning reports whether DIR's Redis (Start's) runs: a command that
// finds it running did not start it, and leaves it running.
func RedisRunning(dir string) bool {
	return runningFrom(filepath.Join(dir, "redis", "redis.pid")) > 0
}

// RunningSentinels returns the service's REDIS_URL for DIR's Sentinels
// when make cluster has started them and they still run.
func RunningSentinels(dir string) (url string, ok bool) {
	s, err := LoadSentinels(dir)
	if err != nil || runningFrom(filepath.Join(sentinelHome(dir), "1", "sentinel.pid")) == 0 {
		return "", false
	}
	return s.URL, true
}
