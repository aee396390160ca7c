package devenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// detached is a server started to outlive this process (etcd, a Patroni
// node, an instance a rolling restart started again): in a session of its
// own, so that a Ctrl-C meant for the command that started it does not
// reach it, and recorded in a pid file, by which `devenv stop` finds it.
type detached struct {
	name string
	pid  int
	log  string
	done chan struct{} // closed when it has exited, while this process runs
}

// detach starts cmd as name, its output appended to logPath, as the user
// cred when not nil, from / unless cmd.Dir says otherwise, and writes its
// pid to pidPath.
func detach(name, logPath, pidPath string, cred *syscall.Credential, cmd *exec.Cmd) (*detached, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &detached{name: name, pid: cmd.Process.Pid, log: logPath, done: make(chan struct{})}
	// Reaped as soon as it ends, so that it is no zombie while this
	// process runs (make cluster's runs for hours).
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	if err := writePid(pidPath, d.pid); err != nil {
		_ = cmd.Process.Kill()
		return nil, err
	}
	return d, nil
}

func (d *detached) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// await polls ready every 100 ms for up to within; it fails with the end
// of the log when the process ends first or the time runs out.
func (d *detached) await(what string, within time.Duration, ready func() bool) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ready() {
			return nil
		}
		if d.exited() {
			return fmt.Errorf("%s ended (see %s):\n%s", d.name, d.log, tail(d.log, 20))
		}
	}
	return fmt.Errorf("%s: not %s after %v (see %s):\n%s", d.name, what, within, d.log, tail(d.log, 20))
}

// tail returns the last lines of a log file, for an error.
func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
