package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seatlock/seatlock/internal/devenv"
)

// clockTicks is how many ticks of CPU time /proc/PID/stat counts a second:
// Linux's USER_HZ, 100 on every architecture Go runs Linux on.
const clockTicks = 100

// procStat is what the runs read of /proc/PID/stat, times in ticks.
type procStat struct {
	ppid           int
	utime, stime   int64 // the process's own
	cutime, cstime int64 // its children's that it has waited for
}

// readStat reads /proc/pid/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat reads a /proc/PID/stat line. The command's name, in
// parentheses, may hold spaces and parentheses itself: the fields start
// after the last ')'.
func parseStat(b []byte) (procStat, error) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return procStat{}, fmt.Errorf("stat %q: no command name", b)
	}
	f := strings.Fields(string(b[end+1:])) // f[0] is field 3, the state
	var err error
	field := func(n int) int64 {
		if n-3 >= len(f) {
			err = fmt.Errorf("stat: %d fields, want %d", len(f)+2, n)
			return 0
		}
		v, e := strconv.ParseInt(f[n-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("stat field %d: %w", n, e)
		}
		return v
	}
	s := procStat{ppid: int(field(4)), utime: field(14), stime: field(15), cutime: field(16), cstime: field(17)}
	return s, err
}

// cpuTicks is the CPU time pid has used so far, user and system.
func cpuTicks(pid int) (int64, error) {
	s, err := readStat(pid)
	return s.utime + s.stime, err
}

// treeTicks is the CPU time a server of many processes has used so far:
// its first process's own, what its ended children left in its
// cutime/cstime (PostgreSQL's autovacuum workers), and its live
// children's.
func treeTicks(pid int) (int64, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	total := s.utime + s.stime + s.cutime + s.cstime
	for _, child := range devenv.ChildrenOf(pid) {
		if c, err := readStat(child); err == nil { // it may have ended since
			total += c.utime + c.stime
		}
	}
	return total, nil
}

// status is the value of key in /proc/pid/status ("69204 kB" for VmHWM),
// empty when there is none.
func status(pid int, key string) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return ""
	}
	return statusValue(string(b), key)
}

func statusValue(text, key string) string {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// mebibytes is a "N kB" value of /proc/PID/status in MiB, "%.1f MiB".
func mebibytes(kB string) string {
	n, err := strconv.ParseFloat(strings.TrimSuffix(kB, " kB"), 64)
	if err != nil {
		return "? MiB"
	}
	return fmt.Sprintf("%.1f MiB", n/1024)
}
