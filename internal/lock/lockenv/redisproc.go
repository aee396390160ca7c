package lockenv

import (
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// RedisProcess is a redis-server of the test's own (no persistence), for
// tests that restart or flush Redis without disturbing other tests.
type RedisProcess struct {
	tb   testing.TB
	Addr string
	dir  string // its working directory: a replica writes the primary's snapshot there
	cmd  *exec.Cmd
}

// StartRedis starts a private redis-server on a free port; it is stopped
// when the test ends.
func StartRedis(tb testing.TB) *RedisProcess {
	tb.Helper()
	p := &RedisProcess{tb: tb, Addr: FreeAddr(tb), dir: tb.TempDir()}
	p.start()
	tb.Cleanup(p.stop)
	return p
}

// Restart kills the server and starts a new, empty one on the same port.
func (p *RedisProcess) Restart() {
	p.tb.Helper()
	p.stop()
	p.start()
}

func (p *RedisProcess) start() {
	p.tb.Helper()
	_, port, _ := net.SplitHostPort(p.Addr)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		p.tb.Fatalf("redis-server not found: %s", install)
	}
	p.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", port,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "", "--dir", p.dir)
	p.cmd.SysProcAttr = sysProcAttr(nil)
	if err := p.cmd.Start(); err != nil {
		p.tb.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", p.Addr); err == nil {
			_ = c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.tb.Fatalf("redis-server on %s did not start", p.Addr)
}

func (p *RedisProcess) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot die
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Kill ends the server at once (SIGKILL), as a crash or a lost host
// would: what it had not yet sent to its replicas is lost.
func (p *RedisProcess) Kill() { p.stop() }

// Pause stops the server process (SIGSTOP): connections stay open and
// commands queue up unanswered, as with a server stalled by a long command,
// a fork or a frozen VM. Resume lets it run them.
func (p *RedisProcess) Pause() { p.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (p *RedisProcess) Resume() { p.signal(syscall.SIGCONT) }

func (p *RedisProcess) signal(sig syscall.Signal) {
	p.tb.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.tb.Fatalf("signal redis-server: %v", err)
	}
}
