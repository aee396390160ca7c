package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseRedisInfo(t *testing.T) {
	info := "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:2.500000\r\nused_cpu_sys_children:9.000000\r\n\r\n" +
		"# Stats\r\ntotal_connections_received:3\r\ntotal_commands_processed:12345\r\n"
	cpu, commands, err := parseRedisInfo(info)
	if err != nil || cpu != 3.75 || commands != 12345 {
		t.Fatalf("parseRedisInfo = %v, %v, %v; want 3.75 s, 12345 commands", cpu, commands, err)
	}
	if _, _, err := parseRedisInfo("# CPU\r\nused_cpu_sys:1\r\nused_cpu_user:2\r\n"); err == nil {
		t.Error("INFO without total_commands_processed read")
	}
	if _, _, err := parseRedisInfo("used_cpu_sys:x\r\nused_cpu_user:2\r\ntotal_commands_processed:1\r\n"); err == nil {
		t.Error("a bad number read")
	}
}

func TestParseProcStat(t *testing.T) {
	// A name with spaces and parentheses: utime 1200, stime 34.
	stat := "4242 (api (x) 1) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1200 34 0 0 20 0 12 0 100 2000000 500 18446744073709551615\n"
	if ticks, err := parseProcStat(stat); err != nil || ticks != 1234 {
		t.Fatalf("parseProcStat = %d, %v; want 1234", ticks, err)
	}
	for _, bad := range []string{"", "4242 (api) S 1 2", "4242 (api) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 34 0"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) read", bad)
		}
	}
	// This process's own line reads, and its CPU does not go back.
	first, err1 := readOwnTicks(t)
	second, err2 := readOwnTicks(t)
	if err1 != nil || err2 != nil || second < first {
		t.Errorf("own ticks %d then %d: %v, %v", first, second, err1, err2)
	}
}

func readOwnTicks(t *testing.T) (int64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc here")
	}
	return parseProcStat(string(b))
}

// The rates a second are the increases over the intervals read at both
// ends: the mean over their time together, the max the busiest one's.
func TestSummarizeCPU(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	readings := []cpuReading{
		{At: at(0), RedisOK: true, RedisCPU: 10, RedisCommands: 1000, ProcOK: true, ProcTicks: 500},
		{At: at(1), RedisOK: true, RedisCPU: 10.1, RedisCommands: 1500, ProcOK: true, ProcTicks: 530},
		{At: at(2), RedisOK: true, RedisCPU: 10.4, RedisCommands: 3500, ProcOK: false},
		{At: at(4), RedisOK: false, ProcOK: true, ProcTicks: 600},
		{At: at(5), RedisOK: true, RedisCPU: 11, RedisCommands: 5000, ProcOK: true, ProcTicks: 610},
	}
	c := summarizeCPU(readings, []string{"pid 9: gone"}, true, []int{9})
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if c.Measured != duration(5*time.Second) || !near(c.RedisCPU.Mean, 20) || !near(c.RedisCPU.Max, 30) ||
		!near(c.RedisCommands.Mean, 1250) || !near(c.RedisCommands.Max, 2000) {
		t.Errorf("redis: %+v %+v over %s; want 20%% (30%% at most) and 1250 a second (2000 at most)", c.RedisCPU, c.RedisCommands, c.Measured)
	}
	// The processes: 30 ticks in the first second, 10 in the last.
	if !near(c.InstancesCPU.Mean, 20) || !near(c.InstancesCPU.Max, 30) {
		t.Errorf("instances: %+v; want 20%% of a core (30%% at most)", c.InstancesCPU)
	}
	if summarizeCPU(readings, nil, false, nil) != nil {
		t.Error("a report of nothing sampled")
	}
	if c := summarizeCPU(readings[:1], nil, true, nil); c.RedisCPU != nil {
		t.Errorf("one reading gave a rate: %+v", c.RedisCPU)
	}
}

// A sampler of processes reads them at its start and its stop.
func TestCPUSamplerReadsProcesses(t *testing.T) {
	root := t.TempDir()
	stat := "7 (api) S 1 7 7 0 -1 0 0 0 0 0 100 50 0 0 20 0 1 0 1 1 1\n"
	if err := os.MkdirAll(filepath.Join(root, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "7", "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cpuSampler{pids: []int{7}, procRoot: root}
	readings, errs := c.start(t.Context())()
	if len(readings) < 2 || !readings[0].ProcOK || readings[0].ProcTicks != 150 || len(errs) != 0 {
		t.Fatalf("readings %+v, errors %v", readings, errs)
	}
	c.pids = []int{8}
	if _, errs := c.start(t.Context())(); len(errs) == 0 {
		t.Error("a missing process read without error")
	}
}
