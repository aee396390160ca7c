package lockenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is a server this test binary started for its tests (see Run).
type process struct {
	name    string
	log     string // its stdout and stderr
	stopSig os.Signal
	cmd     *exec.Cmd
	done    chan struct{} // closed when it has exited
}

// launch starts bin with args, its output in the file logPath, as the
// user cred when not nil (PostgreSQL refuses to run as root). It dies with
// the test binary, should that end without stopping it.
func launch(name, logPath string, stopSig os.Signal, cred *syscall.Credential, bin string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	if cred != nil {
		if err := os.Chown(logPath, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: logPath, stopSig: stopSig, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process to end (stopSig), and kills it after 10 s.
func (p *process) stop() error {
	if p.exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused process cannot stop
	_ = p.cmd.Process.Signal(p.stopSig)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("%s did not stop within 10 s of %v: killed", p.name, p.stopSig)
}

// tail returns the last lines of the process's log, for an error.
func (p *process) tail(lines int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// freePort returns a port nothing listens on, from 20000-32767: below the
// kernel's usual ephemeral range (32768 and up), where an outgoing
// connection could take the port between this check and the server's
// bind. Another test binary may still take it first: the servers' starts
// try again on other ports when theirs was taken.
func freePort() (int, error) {
	for range 200 {
		port := 20000 + rand.IntN(12768)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		_ = ln.Close()
		return port, nil
	}
	return 0, fmt.Errorf("no free port found in 20000-32767")
}

// portTaken tells, from the end of a server's log, that it could not bind
// its port: another process took it after freePort.
func portTaken(log string) bool {
	return strings.Contains(log, "Address already in use") || strings.Contains(log, "could not bind")
}
