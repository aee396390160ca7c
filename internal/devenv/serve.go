// Package devenv is the service's local topology, built on lockenv: the
// servers `make run`, `make cluster` and the measuring runs start, and the
// instances of the service they serve.
package devenv

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// readyWithin is how long an instance may take to answer /readyz: it
// applies its migrations first.
const readyWithin = 30 * time.Second

// Serve starts bin with args as name, serving HTTP on addr: its
// environment is this process's, then env, then HTTP_ADDR=addr (a later
// setting of a name wins); its output is appended to logPath. Stop sends
// it SIGTERM, which the service and the baseline shut down on. Serve
// returns once http://addr/readyz answers 200; when the process exits
// first or does not get ready within 30 s, it is stopped and the error
// carries the end of its log.
func Serve(name, logPath string, env []string, addr string, bin string, args ...string) (*lockenv.Process, error) {
	// Launch runs it from /: a path relative to here would name nothing there.
	if strings.ContainsRune(bin, filepath.Separator) {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return nil, err
		}
		bin = abs
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), env...), "HTTP_ADDR="+addr)
	p, err := lockenv.Launch(name, logPath, syscall.SIGTERM, nil, cmd)
	if err != nil {
		return nil, err
	}
	if err := awaitReady(addr, readyWithin, p.Exited); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%s on %s: %w; the end of %s:\n%s", name, addr, err, logPath, p.Tail(20))
	}
	return p, nil
}

// AwaitReady waits up to within until http://addr/readyz answers 200: the
// service, or HAProxy in front of its instances, takes requests. It asks
// at least once; the error names the last answer, or why there was none.
func AwaitReady(addr string, within time.Duration) error {
	return awaitReady(addr, within, func() bool { return false })
}

// awaitReady is AwaitReady that gives up as soon as exited says the
// server has ended.
func awaitReady(addr string, within time.Duration, exited func() bool) error {
	// Each attempt may take a second: an instance busy starting may be
	// slow to answer.
	client := &http.Client{Timeout: time.Second}
	url := "http://" + addr + "/readyz"
	deadline := time.Now().Add(within)
	for {
		if exited() {
			return fmt.Errorf("exited before it was ready")
		}
		var last string
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s did not answer 200 within %v (last: %s)", url, within, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Ready reports whether http://addr/readyz answers 200 now.
func Ready(addr string) bool { return status("http://"+addr+"/readyz") == http.StatusOK }
