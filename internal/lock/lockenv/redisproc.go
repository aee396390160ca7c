package lockenv

import (
	"net"
	"os/exec"
	"path/filepath"
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
	proc *Process
}

// StartRedis starts a private redis-server on a free port; it is stopped
// when the test ends.
func StartRedis(tb testing.TB) *RedisProcess {
	tb.Helper()
	p := &RedisProcess{tb: tb, Addr: FreeAddr(tb), dir: tb.TempDir()}
	p.start()
	tb.Cleanup(p.Kill)
	return p
}

// Restart kills the server and starts a new, empty one on the same port.
func (p *RedisProcess) Restart() {
	p.tb.Helper()
	p.Kill()
	p.start()
}

func (p *RedisProcess) start() {
	p.tb.Helper()
	_, port, _ := net.SplitHostPort(p.Addr)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		p.tb.Fatalf("redis-server not found: %s", install)
	}
	p.proc, err = launch("redis-server", filepath.Join(p.dir, "redis.log"), syscall.SIGTERM, nil, bin, RedisArgs(port, p.dir)...)
	if err == nil {
		err = AwaitListening(p.proc, p.Addr, 10*time.Second)
	}
	if err != nil {
		p.tb.Fatal(err)
	}
}

// Kill ends the server at once (SIGKILL), as a crash or a lost host
// would: what it had not yet sent to its replicas is lost.
func (p *RedisProcess) Kill() { p.proc.Kill() }

// Pause stops the server process (SIGSTOP): connections stay open and
// commands queue up unanswered, as with a server stalled by a long command,
// a fork or a frozen VM. Resume lets it run them.
func (p *RedisProcess) Pause() { p.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (p *RedisProcess) Resume() { p.signal(syscall.SIGCONT) }

func (p *RedisProcess) signal(sig syscall.Signal) {
	p.tb.Helper()
	if err := p.proc.Signal(sig); err != nil {
		p.tb.Fatalf("signal redis-server: %v", err)
	}
}
