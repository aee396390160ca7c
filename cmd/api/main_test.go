package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

const secret = "cmd-api-test-secret-cmd-api-test!"

func TestTokenCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"token", "--user", "alice", "--role", "admin", "--ttl", "1h"},
		map[string]string{"AUTH_SECRET": secret}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	v, err := auth.NewVerifier([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(strings.TrimSpace(out.String()))
	if err != nil || p.UserID != "alice" || !p.IsAdmin() {
		t.Fatalf("minted token: %+v, %v", p, err)
	}
}

func TestTokenHelpListsItsFlags(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"token", arg}, nil, &out, &errOut); code != 0 {
			t.Fatalf("token %s: exit %d: %s", arg, code, errOut.String())
		}
		for _, flag := range []string{"-user", "-role", "-ttl", "AUTH_SECRET"} {
			if !strings.Contains(out.String(), flag) {
				t.Errorf("token %s output lacks %q:\n%s", arg, flag, out.String())
			}
		}
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, nil, 2, "unknown command"},
		{"token without user", []string{"token"}, map[string]string{"AUTH_SECRET": secret}, 1, "--user is required"},
		{"token without secret", []string{"token", "--user", "a"}, nil, 1, "AUTH_SECRET"},
		{"token with an unknown flag", []string{"token", "--usr", "a"}, nil, 1, "api token -h"},
		{"token with short secret", []string{"token", "--user", "a"}, map[string]string{"AUTH_SECRET": "short"}, 1, "at least 32 bytes"},
		{"serve without config", []string{"serve"}, nil, 1, "DATABASE_URL"},
		{"migrate without database", []string{"migrate"}, nil, 1, "DATABASE_URL"},
		{"unknown log format", []string{"serve"}, map[string]string{"LOG_FORMAT": "xml"}, 1, `LOG_FORMAT must be "json" or "text"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, tt.env, &out, &errOut)
			if code != tt.code || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut.String(), tt.code, tt.want)
			}
		})
	}
}

func TestMigrateThenServeUntilCancelled(t *testing.T) {
	dbURL := lockenv.DatabaseURL(t)
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"migrate"}, map[string]string{"DATABASE_URL": dbURL}, &out, &errOut); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut.String())
	}

	addr := lockenv.FreeAddr(t)
	env := map[string]string{
		"DATABASE_URL": dbURL, "REDIS_URL": lockenv.RedisURL(t), "AUTH_SECRET": secret, "HTTP_ADDR": addr,
	}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var serveOut, serveErr bytes.Buffer
	go func() { exit <- run(ctx, nil, env, &serveOut, &serveErr) }()
	waitHealthy(t, "http://"+addr+"/healthz")

	cancel() // what SIGTERM does through signal.NotifyContext
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("serve exit %d after shutdown: %s", code, serveErr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
	if strings.Contains(serveOut.String(), secret) {
		t.Error("the logs contain AUTH_SECRET")
	}
	// Shutdown goes in order: no new connections and the requests drained
	// first, the jobs after them, and a last line that says so.
	want := []string{
		"shutting down: no new connections; draining in-flight requests",
		"shutting down: requests drained",
		"shutting down: stopping jobs",
		"stopped cleanly",
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(serveOut.String()), "\n") {
		var entry struct{ Msg string }
		if json.Unmarshal([]byte(line), &entry) == nil && (strings.HasPrefix(entry.Msg, "shutting down") || entry.Msg == "stopped cleanly") {
			got = append(got, entry.Msg)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("shutdown log lines = %q, want %q", got, want)
	}
	if last := lastLine(serveOut.String()); !strings.Contains(last, `"msg":"stopped cleanly"`) {
		t.Errorf("last log line = %s, want the clean stop", last)
	}
}

// TestTextLogsForAPerson: with LOG_FORMAT=text (what make run sets on a
// terminal) the request log goes through slog's text handler, a line a
// person reads, and no JSON line is written.
func TestTextLogsForAPerson(t *testing.T) {
	addr := lockenv.FreeAddr(t)
	env := map[string]string{
		"DATABASE_URL": lockenv.DatabaseURL(t), "REDIS_URL": lockenv.RedisURL(t), "AUTH_SECRET": secret,
		"HTTP_ADDR": addr, "LOG_FORMAT": "text",
	}
	ctx, cancel := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	var serveOut, serveErr bytes.Buffer
	go func() { exit <- run(ctx, nil, env, &serveOut, &serveErr) }()
	waitHealthy(t, "http://"+addr+"/healthz")
	resp, err := http.Get("http://" + addr + "/schedules/0")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("serve exit %d: %s", code, serveErr.String())
	}
	out := serveOut.String()
	for _, want := range []string{"msg=request", "method=GET", "path=/schedules/0", "status=404", "code=schedule_not_found", "msg=\"stopped cleanly\""} {
		if !strings.Contains(out, want) {
			t.Errorf("text log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `{"time"`) {
		t.Errorf("text log has JSON lines:\n%s", out)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered 200", url)
}
