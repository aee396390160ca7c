package main

// What the service's processes hold in memory, a second at a time: the
// resident set (VmRSS of /proc/PID/status) of each of -pids and
// -pid-files, each reading labelled with the stage of the run it was
// taken in, so the report can tell the memory of making the schedules
// from the memory of keeping them.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// rssInterval is how often the sampler reads.
const rssInterval = time.Second

// rssReading is one reading of every process: Bytes[i] is pids[i]'s
// resident set, -1 when it could not be read.
type rssReading struct {
	At    time.Time
	Stage string
	Bytes []int64
}

// rssSampler reads the resident set of pids (under procRoot: /proc but
// in tests) every rssInterval, from start until the returned func is
// called; setStage labels the readings taken from then on.
type rssSampler struct {
	pids     []int
	procRoot string
	stage    atomic.Pointer[string]
}

func newRSSSampler(pids []int) *rssSampler {
	s := &rssSampler{pids: pids, procRoot: "/proc"}
	s.setStage("")
	return s
}

func (s *rssSampler) setStage(stage string) { s.stage.Store(&stage) }

// read takes one reading; err says which processes could not be read.
func (s *rssSampler) read(context.Context) (rssReading, error) {
	r := rssReading{At: time.Now(), Stage: *s.stage.Load(), Bytes: make([]int64, len(s.pids))}
	var errs []error
	for i, pid := range s.pids {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d/status", s.procRoot, pid))
		if err == nil {
			r.Bytes[i], err = parseVmRSS(string(b))
		}
		if err != nil {
			r.Bytes[i] = -1
			errs = append(errs, fmt.Errorf("pid %d: %w", pid, err))
		}
	}
	return r, errors.Join(errs...)
}

// start checks that every process can be read, then reads every
// rssInterval until the returned func is called, which takes a last
// reading and gives them all, with samples of the errors.
func (s *rssSampler) start() (stop func() ([]rssReading, []string), err error) {
	if _, err := s.read(context.Background()); err != nil {
		return nil, err
	}
	return readEvery(context.Background(), rssInterval, s.read), nil
}

// parseVmRSS reads the resident set (bytes) from /proc/PID/status:
// its VmRSS line, in kB (KiB, as the kernel means it).
func parseVmRSS(status string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		value, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("VmRSS %q is not a number of kB", strings.TrimSpace(value))
		}
		kib, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kib < 0 {
			return 0, fmt.Errorf("VmRSS %q is not a number of kB", strings.TrimSpace(value))
		}
		return kib << 10, nil
	}
	// A process that has exited but not been reaped has no VmRSS line.
	return 0, errors.New("no VmRSS line (the process has exited?)")
}
