package devenv

import (
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// KillTree ends the processes roots and every process below them as a
// machine dying would: the roots are frozen first (SIGSTOP), so that none
// acts or forks while the tree is read, then all are sent SIGKILL
// together. It waits up to 10 s for the roots to be gone, and returns how
// many processes it killed.
func KillTree(roots ...int) int {
	for _, pid := range roots {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	victims := slices.Clone(roots)
	for i := 0; i < len(victims); i++ {
		for _, child := range ChildrenOf(victims[i]) {
			if !slices.Contains(victims, child) {
				victims = append(victims, child)
			}
		}
	}
	for _, pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range roots {
		waitGone(pid, 10*time.Second)
	}
	return len(victims)
}

// ChildrenOf lists the processes whose parent is pid, from /proc.
func ChildrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st := procStat(child); len(st) > 1 && st[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}
