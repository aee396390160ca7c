package devenv

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// Serve starts bin with args as name, in an environment of this process's
// own, env and HTTP_ADDR=addr, its output appended to logPath, and waits
// up to 30 s for it to answer http://addr/readyz with 200. SIGTERM stops
// it (Process.Stop), and it dies with this process. When it exits first,
// or the time runs out (it is then stopped), the error carries the end of
// its log.
func Serve(name, logPath string, env []string, addr string, bin string, args ...string) (*lockenv.Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), env...), "HTTP_ADDR="+addr)
	p, err := lockenv.Launch(name, logPath, syscall.SIGTERM, nil, cmd)
	if err != nil {
		return nil, err
	}
	if err := awaitServing(addr, 30*time.Second, p.Exited); err != nil {
		if !p.Exited() {
			_ = p.Stop(10 * time.Second)
		}
		return nil, fmt.Errorf("%s %s (see %s):\n%s", name, err, logPath, p.Tail(20))
	}
	return p, nil
}

// AwaitReady waits up to within for http://addr/readyz to answer 200.
func AwaitReady(addr string, within time.Duration) error {
	if err := awaitServing(addr, within, func() bool { return false }); err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	return nil
}

// awaitServing polls http://addr/readyz every 100 ms until it answers
// 200, gone says the server has ended, or within has passed.
func awaitServing(addr string, within time.Duration, gone func() bool) error {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		if Ready(addr) {
			return nil
		}
		if gone() {
			return fmt.Errorf("ended before it was ready")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %v", within)
		}
	}
}

// Ready reports whether http://addr/readyz answers 200 now.
func Ready(addr string) bool { return status("http://"+addr+"/readyz") == http.StatusOK }
