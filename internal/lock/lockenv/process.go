package lockenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is a server a test binary started for its tests: the shared
// servers of Run, a private redis-server (StartRedis), or the service's
// Sentinels and Patroni nodes.
type Process struct {
	Name    string
	log     string // its stdout and stderr
	stopSig os.Signal
	cmd     *exec.Cmd
	done    chan struct{} // closed when it has exited
}

// Launch starts cmd as name, its output in the file logPath, as the user
// cred when not nil (PostgreSQL refuses to run as root); Stop sends it
// stopSig. It runs from / unless cmd.Dir says otherwise, and dies with
// the test binary, should that end without stopping it.
func Launch(name, logPath string, stopSig os.Signal, cred *syscall.Credential, cmd *exec.Cmd) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	if cred != nil {
		if err := os.Chown(logPath, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, log: logPath, stopSig: stopSig, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// launch is Launch of bin with args.
func launch(name, logPath string, stopSig os.Signal, cred *syscall.Credential, bin string, args ...string) (*Process, error) {
	return Launch(name, logPath, stopSig, cred, exec.Command(bin, args...))
}

// RedisArgs are the arguments of a test's own throwaway redis-server on
// port, in dir, in the foreground, keeping nothing on disk; more follow
// them.
func RedisArgs(port, dir string, more ...string) []string {
	return append([]string{"--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--dir", dir}, more...)
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop asks the process to end (its stop signal), and kills it after
// within.
func (p *Process) Stop(within time.Duration) error {
	if p.Exited() {
		return nil
	}
	_ = p.Signal(syscall.SIGCONT) // a paused process cannot stop
	_ = p.Signal(p.stopSig)
	select {
	case <-p.done:
		return nil
	case <-time.After(within):
	}
	p.Kill()
	return fmt.Errorf("%s did not stop within %v of %v: killed", p.Name, within, p.stopSig)
}

// Kill ends the process at once (SIGKILL), as a crash or a lost host
// would, and waits until it has.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGCONT) // a paused process cannot die
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Tail returns the last lines of the process's log, for an error.
func (p *Process) Tail(lines int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// AwaitListening waits up to within until something accepts connections
// on addr, and fails with the end of p's log when p exits or the time
// runs out first.
func AwaitListening(p *Process, addr string, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline) && !p.Exited(); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return nil
		}
	}
	return fmt.Errorf("%s on %s did not start:\n%s", p.Name, addr, p.Tail(10))
}

// portTaken tells, from the end of a server's log, that it could not bind
// its port: another process took it after FreePort.
func portTaken(log string) bool {
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "could not bind")
}
