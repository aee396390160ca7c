package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/app"
	"github.com/seatlock/seatlock/internal/config"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/reservation"
)

// childInstanceEnv, when set, makes this test binary serve as one API
// instance (what `api serve` does) instead of running tests: a process of
// its own that a test can kill -9.
const childInstanceEnv = "SEATLOCK_TEST_CHILD_INSTANCE"

func TestMain(m *testing.M) {
	if ns, ok := os.LookupEnv(childInstanceEnv); ok {
		os.Exit(serveChildInstance(ns))
	}
	lockenv.Run(m)
}

// serveChildInstance reads the configuration from the environment as
// `api serve` does, and serves until SIGTERM or SIGINT (or SIGKILL). Its
// periodic jobs run in the job namespace ns, as the harness's do.
func serveChildInstance(ns string) int {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := config.Load(env)
	if err != nil {
		logger.Error("config", slog.Any("err", err))
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	opts := []app.Option{app.WithJobNamespace(ns)}
	if os.Getenv(killAfterCommitEnv) != "" {
		opts = append(opts, app.WithoutJobs(), app.WithStoreWrapper(func(r reservation.Repository) reservation.Repository {
			return killAfterCommit{r}
		}))
	}
	a, err := app.New(ctx, cfg, logger, opts...)
	if err != nil {
		logger.Error("start", slog.Any("err", err))
		return 1
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		logger.Error("listen", slog.Any("err", err))
		return 1
	}
	if err := a.Serve(ctx, ln); err != nil {
		logger.Error("serve", slog.Any("err", err))
		return 1
	}
	return 0
}

// childInstance is an API instance in a process of its own.
type childInstance struct {
	base string
	cmd  *exec.Cmd
	logs string // the file of its stdout and stderr
}

// startChildInstance starts this test binary as an API instance with the
// given configuration (environment variables; HTTP_ADDR is chosen here)
// and waits until it is healthy. It is killed when the test ends.
func startChildInstance(t *testing.T, jobNamespace string, env map[string]string) *childInstance {
	t.Helper()
	addr := lockenv.FreeAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{childInstanceEnv + "=" + jobNamespace, "HTTP_ADDR=" + addr}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &childInstance{base: "http://" + addr, cmd: cmd, logs: filepath.Join(t.TempDir(), "instance.log")}
	logs, err := os.Create(c.logs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logs.Close() }()
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child instance: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("child instance output:\n%s", c.output())
		}
	})
	deadline := time.Now().Add(faultPatience)
	for {
		resp, err := http.Get(c.base + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("child instance not healthy after %v:\n%s", faultPatience, c.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startChild starts a child instance (startChildInstance) of h's
// deployment: on h's database and Redis, its periodic jobs namespaced as
// h's instances' are, with env's variables added (a DATABASE_URL there
// replaces h's: a proxied one, say).
func (h *harness) startChild(t *testing.T, env map[string]string) *childInstance {
	t.Helper()
	u, err := url.Parse(h.cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"DATABASE_URL": h.cfg.DatabaseURL, "REDIS_URL": h.cfg.RedisURL, "AUTH_SECRET": testSecret}
	maps.Copy(all, env)
	return startChildInstance(t, strings.TrimPrefix(u.Path, "/")+"/", all)
}

// kill9 ends the instance at once (SIGKILL): no release, no drain, its
// connections closed by the kernel.
func (c *childInstance) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 the child instance: %v", err)
	}
	err := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child instance ended with %v, not by SIGKILL", err)
	}
}

// output is what the instance has logged so far.
func (c *childInstance) output() string {
	b, err := os.ReadFile(c.logs)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// durationEnv writes d as a configuration value.
func durationEnv(d time.Duration) string { return fmt.Sprint(d) }
