package devenv

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A server started detached is in a session of its own and found again by
// its pid file; KillTree ends it and every process below it.
func TestDetachedTreeKilledWhole(t *testing.T) {
	dir := t.TempDir()
	pidPath := filepath.Join(dir, "tree.pid")
	d, err := detach("tree", filepath.Join(dir, "tree.log"), pidPath, nil,
		exec.Command("sh", "-c", "sleep 60 & sleep 60 & echo started; wait"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.await("started", 10*time.Second, func() bool { return len(ChildrenOf(d.pid)) == 2 }); err != nil {
		t.Fatal(err)
	}
	if st := procStat(d.pid); len(st) < 4 || st[3] != strconv.Itoa(d.pid) {
		t.Errorf("/proc stat %v: want a session of its own, %d", st, d.pid)
	}
	if pid := runningFrom(pidPath); pid != d.pid {
		t.Errorf("the pid file names %d running, want %d", pid, d.pid)
	}
	children := ChildrenOf(d.pid)
	if killed := KillTree(d.pid); killed != 3 {
		t.Errorf("KillTree killed %d processes, want 3", killed)
	}
	for _, pid := range append(children, d.pid) {
		if !waitGone(pid, 5*time.Second) {
			t.Errorf("pid %d still runs after KillTree", pid)
		}
	}
}

// stopPidfiles stops what its pid files name, and only what runs.
func TestStopPidfiles(t *testing.T) {
	dir := t.TempDir()
	pidPath := filepath.Join(dir, "sleep.pid")
	d, err := detach("sleep", filepath.Join(dir, "sleep.log"), pidPath, nil, exec.Command("sleep", "60"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writePid(filepath.Join(dir, "gone.pid"), 1<<22+1); err != nil {
		t.Fatal(err)
	}
	stopped := stopPidfiles(pidPath, filepath.Join(dir, "gone.pid"), filepath.Join(dir, "missing.pid"))
	if len(stopped) != 1 || stopped[0] != d.pid {
		t.Errorf("stopped %v, want [%d]", stopped, d.pid)
	}
	if running(d.pid) {
		t.Errorf("pid %d still runs", d.pid)
	}
}
