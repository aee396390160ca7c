package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestPaste runs blocks through bash and the curl wrapper against a
// service that answers 404 on /missing, 200 elsewhere.
func TestPaste(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name    string
		text    string
		wantErr string // "" when the block passes
	}{
		{
			name: "statuses as the comments say, after the body and on stderr",
			text: "curl -s -w ' %{http_code}\\n' http://$HTTP_ADDR/   # 200\n" +
				"X=$(curl -s -w '%{stderr}%{http_code}\\n' http://$HTTP_ADDR/missing)   # 404; kept\n",
		},
		{
			name: "background curls are waited for",
			text: "curl -s -o /dev/null -w '%{http_code}\\n' http://$HTTP_ADDR/ &   # 200\n",
		},
		{
			name: "a block without curl expects no status",
			text: "echo hello\n",
		},
		{
			name:    "a status other than the comment's",
			text:    "curl -s -w ' %{http_code}\\n' http://$HTTP_ADDR/missing   # 200\n",
			wantErr: "statuses [404], its comments say [200]",
		},
		{
			name:    "a curl without -w",
			text:    "curl -s http://$HTTP_ADDR/   # 200\n",
			wantErr: "failed",
		},
		{
			name:    "-w without a format",
			text:    "curl -s http://$HTTP_ADDR/ -w\n",
			wantErr: "failed",
		},
		{
			name:    "a failing command fails the block (bash -e)",
			text:    "false\necho not reached\n",
			wantErr: "failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &walkthrough{work: t.TempDir(), clone: t.TempDir(), addr: strings.TrimPrefix(srv.URL, "http://")}
			if err := os.Mkdir(w.workFile("blocks"), 0o755); err != nil {
				t.Fatal(err)
			}
			err := w.paste(t.Context(), block{name: "01-test-01", text: tt.text})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("paste: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("paste: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestProcessSession(t *testing.T) {
	tests := []struct {
		stat string
		want int
	}{
		{"4242 (make) S 4200 4242 4242 0 -1 4194560 …", 4242},
		{"4250 (bin/api serve) S 4248 4248 4242 0 -1", 4242},
		{"4251 (a) b (c)) R 1 2 3 4", 3},
		{"4252 (truncated) S 1", -1},
		{"no parenthesis", -1},
	}
	for _, tt := range tests {
		if got := processSession(tt.stat); got != tt.want {
			t.Errorf("processSession(%q) = %d, want %d", tt.stat, got, tt.want)
		}
	}
}

// TestSessionProcesses finds a process started in a session of its own by
// its command line, and nothing of that session by another.
func TestSessionProcesses(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	sid := cmd.Process.Pid
	pids, err := sessionProcesses(sid, "sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pids, []int{sid}) {
		t.Errorf("sessionProcesses(%d, \"sleep 30\") = %v, want [%d]", sid, pids, sid)
	}
	if pids, _ := sessionProcesses(sid, "bin/api serve"); len(pids) != 0 {
		t.Errorf("sessionProcesses(%d, \"bin/api serve\") = %v, want none", sid, pids)
	}
}
