package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// makeRun is a clone's `make run` in the background, in a session of its
// own: the session's id is make's pid, SIGTERM to that process group
// reaches make, devenv run and the API, and the API is found among the
// session's processes.
type makeRun struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed once make run has ended
	err  error         // how it ended, once done is closed
}

// startMakeRun starts `make run` in dir on addr, its output to logPath.
func startMakeRun(dir, addr, logPath string) (*makeRun, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("make", "run")
	cmd.Dir = dir
	cmd.Env = environ(nil, "HTTP_ADDR="+addr)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, err
	}
	r := &makeRun{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		r.err = cmd.Wait()
		_ = out.Close()
		close(r.done)
	}()
	return r, nil
}

// startRun starts the clone's make run (its output to the work file
// logName) and returns once it serves: /readyz answers within 2 minutes.
func (w *walkthrough) startRun(ctx context.Context, logName string) error {
	r, err := startMakeRun(w.clone, w.addr, w.workFile(logName))
	if err != nil {
		return err
	}
	w.run = r
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if ready(ctx, w.addr) {
			return nil
		}
		if !r.running() {
			return failure(ctx, []string{r.log}, "make run ended before it served")
		}
		if time.Now().After(deadline) {
			return failure(ctx, []string{r.log}, "make run did not serve within 2 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ready: the service on addr answers /readyz with a success.
func ready(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode < 400
}

func (r *makeRun) running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// wait answers how make run ended, once it has.
func (r *makeRun) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// endsWithin: make run ends within d.
func (r *makeRun) endsWithin(ctx context.Context, d time.Duration) bool {
	select {
	case <-r.done:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return false
	}
}

// stop ends make run's session as Ctrl-C would, SIGTERM to its process
// group, and waits for make; a make run that outlives a minute is killed.
func (r *makeRun) stop() {
	session := r.cmd.Process.Pid
	_ = syscall.Kill(-session, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-session, syscall.SIGKILL)
		<-r.done
	}
}

// apiServe is what the API's command line holds under make run: devenv
// run starts it as `bin/api serve`.
const apiServe = "bin/api serve"

// signalAPI sends sig to the API of make run's session, and to nothing
// else of it: make and devenv run must see the API end on its own.
func (r *makeRun) signalAPI(sig syscall.Signal) error {
	pids, err := sessionProcesses(r.cmd.Process.Pid, apiServe)
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return errors.New("no " + apiServe + " in make run's session")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil {
			return err
		}
	}
	return nil
}

// sessionProcesses lists the processes of session sid whose command line
// (its arguments joined by spaces) contains cmdline, from /proc.
func sessionProcesses(sid int, cmdline string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // ended since the listing
		}
		if processSession(string(stat)) != sid {
			continue
		}
		args, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(args), "\x00", " "), cmdline) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// processSession reads the session id from a /proc/PID/stat line:
// "pid (comm) state ppid pgrp session ...", where comm may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func processSession(stat string) int {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(fields[3])
	if err != nil {
		return -1
	}
	return sid
}
