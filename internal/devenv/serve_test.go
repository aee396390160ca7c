package devenv

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// TestServeWaitsUntilReady serves this test binary as a server that
// answers /readyz only after a while: Serve returns once it does.
func TestServeWaitsUntilReady(t *testing.T) {
	addr := lockenv.FreeAddr(t)
	logPath := filepath.Join(t.TempDir(), "ready.log")
	p, err := Serve("ready", logPath, []string{"DEVENV_TEST_SERVER=slow"}, addr, os.Args[0], "-test.run=^$")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Stop(5 * time.Second) }()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz after Serve: %s", resp.Status)
	}
	if err := AwaitReady(addr, time.Second); err != nil {
		t.Error(err)
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Errorf("stop on SIGTERM: %v", err)
	}
}

// TestServeReportsAnEarlyExit: a server that exits before it is ready
// fails Serve at once, with the end of its log.
func TestServeReportsAnEarlyExit(t *testing.T) {
	addr := lockenv.FreeAddr(t)
	start := time.Now()
	_, err := Serve("broken", filepath.Join(t.TempDir(), "broken.log"), []string{"DEVENV_TEST_SERVER=exit"}, addr, os.Args[0], "-test.run=^$")
	if err == nil || !strings.Contains(err.Error(), "no DATABASE_URL") || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Serve of a server that exits: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("Serve took %v to see the exit", time.Since(start))
	}
}

func TestAwaitReadyGivesUp(t *testing.T) {
	if err := AwaitReady(lockenv.FreeAddr(t), 300*time.Millisecond); err == nil {
		t.Error("ready with nothing listening")
	}
}

// TestMain runs this test binary as the server the tests of Serve start,
// when DEVENV_TEST_SERVER says which: one that exits at once, or one that
// answers /readyz only after a while.
func TestMain(m *testing.M) {
	switch os.Getenv("DEVENV_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "exit":
		fmt.Println("config: no DATABASE_URL")
		os.Exit(1)
	}
	started := time.Now()
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if time.Since(started) < 300*time.Millisecond {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	fmt.Println(http.ListenAndServe(os.Getenv("HTTP_ADDR"), nil))
	os.Exit(1)
}
func TestAwaitReadyWaitsFor200(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if asked.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	if err := AwaitReady(strings.TrimPrefix(srv.URL, "http://"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("asked /readyz %d times, want 3 (two 503s, then 200)", n)
	}
}

func TestAwaitReadyNamesTheLastAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	err := AwaitReady(strings.TrimPrefix(srv.URL, "http://"), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable") {
		t.Fatalf("AwaitReady = %v, want an error naming the 503", err)
	}
}
