package devenv

// Temporary: stands in for the topology's own Start, LoadEnv, Stop, Serve
// and ReadEnvFile until they are merged.

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

)

type Env struct {
	RedisPort, PGPort                                    int
	PGPassword, PGDir, RedisURL, DatabaseURL, AuthSecret string
}

func (e Env) Environ() []string {
	return []string{"REDIS_URL=" + e.RedisURL, "DATABASE_URL=" + e.DatabaseURL, "AUTH_SECRET=" + e.AuthSecret}
}

func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[k] = v
	}
	return out, sc.Err()
}

func LoadEnv(dir string) (Env, error) {
	v, err := ReadEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		return Env{}, err
	}
	e := Env{PGPassword: v["PG_PASSWORD"], PGDir: v["PG_DIR"], RedisURL: v["REDIS_URL"], DatabaseURL: v["DATABASE_URL"], AuthSecret: v["AUTH_SECRET"]}
	e.RedisPort, _ = strconv.Atoi(v["REDIS_PORT"])
	e.PGPort, _ = strconv.Atoi(v["PG_PORT"])
	return e, nil
}

func Start(dir string) (Env, error) {
	cmd := exec.Command("bash", "scripts/devenv.sh", "start", dir)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return Env{}, err
	}
	return LoadEnv(dir)
}

func Stop(dir string, say io.Writer) error {
	cmd := exec.Command("bash", "scripts/devenv.sh", "stop", dir)
	cmd.Stdout, cmd.Stderr = say, say
	return cmd.Run()
}

func FreePort() (int, error) {
	out, err := exec.Command("bash", "scripts/devenv.sh", "port").Output()
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

func pidRunning(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && syscall.Kill(pid, 0) == nil
}

func RedisRunning(dir string) bool { return pidRunning(filepath.Join(dir, "redis", "redis.pid")) }

func RunningSentinels(dir string) (string, bool) {
	v, err := ReadEnvFile(filepath.Join(dir, "sentinel", "env"))
	if err != nil || !pidRunning(filepath.Join(dir, "sentinel", "1", "sentinel.pid")) {
		return "", false
	}
	return v["SENTINEL_URL"], true
}
