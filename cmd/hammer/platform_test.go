package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tapi\nVmPeak:\t 2000000 kB\nVmHWM:\t  300000 kB\nVmRSS:\t  262144 kB\nRssAnon:\t 200000 kB\nThreads:\t12\n"
	if b, err := parseVmRSS(status); err != nil || b != 256<<20 {
		t.Fatalf("parseVmRSS = %d, %v; want 256 MiB", b, err)
	}
	for _, bad := range []string{"Name:\tapi\nState:\tZ (zombie)\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n", "VmRSS:\n"} {
		if _, err := parseVmRSS(bad); err == nil {
			t.Errorf("parseVmRSS(%q) read", bad)
		}
	}
	// This process's own status reads.
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc here")
	}
	if b, err := parseVmRSS(string(own)); err != nil || b <= 0 {
		t.Errorf("own VmRSS %d, %v", b, err)
	}
}

// A sampler reads every process at its start and its stop, each reading
// labelled with the stage set before it; a process it cannot read at the
// start stops it.
func TestRSSSamplerLabelsItsReadings(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "7"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "7", "status"), []byte("VmRSS:\t1024 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newRSSSampler([]int{7})
	s.procRoot = root
	s.setStage(stageSetup)
	stop, err := s.start()
	if err != nil {
		t.Fatal(err)
	}
	s.setStage(stageMany)
	readings, errs := stop()
	first, last := readings[0], readings[len(readings)-1]
	if first.Stage != stageSetup || last.Stage != stageMany || last.Bytes[0] != 1<<20 || len(errs) != 0 {
		t.Fatalf("readings %+v, errors %v; want the first of setup, the last of many, 1 MiB", readings, errs)
	}
	s.pids = []int{8}
	if _, err := s.start(); err == nil {
		t.Error("a missing process started the sampler")
	}
}

// The memory of making the schedules is reported apart: the maximum
// judged is of the stages after it.
func TestSummarizeRSS(t *testing.T) {
	mib := func(n int64) int64 { return n << 20 }
	readings := []rssReading{
		{Stage: stageSetup, Bytes: []int64{mib(900), mib(10)}},
		{Stage: stageWatch, Bytes: []int64{mib(300), -1}},
		{Stage: stageOne, Bytes: []int64{mib(310), -1}},
		{Stage: stageMany, Bytes: []int64{mib(400), -1}},
		{Stage: stageMany, Bytes: []int64{mib(350), -1}},
	}
	r := summarizeRSS(readings, nil, []int{1, 2}, 512)
	p := r.Processes[0]
	if p.Setup != 900 || p.Max != 400 || p.One != 310 || p.Many != 400 || p.Last != 350 || p.Unread {
		t.Errorf("process 1: %+v; want setup 900, max 400 (one 310, many 400), last 350", p)
	}
	if q := r.Processes[1]; !q.Unread || q.Setup != 10 {
		t.Errorf("process 2, read only while made: %+v", q)
	}
	ts := platformTargets(&platformReport{RSS: r, Settings: platformConfig{P99Tolerance: 0.1}})
	if !ts[0].Met || ts[1].Met {
		t.Errorf("targets %+v; want process 1 within 512 MiB, process 2 not judged met", ts)
	}
}

// platformOK is a platform report that passes: both phases read enough,
// the stadiums' p99 with every schedule read within the tolerance of the
// one-stadium p99.
func platformOK() *report {
	phase := func(name string, p99 time.Duration) readPhase {
		return readPhase{Name: name, Sent: 1000, Responses: map[string]int{keyOK: 1000}, Checked: 3,
			Latency: latency{P99: duration(p99)}, StadiumLatency: latency{P99: duration(p99)}}
	}
	return &report{C: 64, Platform: &platformReport{
		Settings: platformConfig{P99Tolerance: 0.1},
		One:      phase(stageOne, 10*time.Millisecond),
		Many:     phase(stageMany, 10900*time.Microsecond),
		RSS:      rssReport{LimitMiB: 512, Processes: []rssProcess{{PID: 7, Max: 500}}},
	}}
}

func TestJudgePlatform(t *testing.T) {
	if v := judgePlatform(platformOK(), false); !v.Pass {
		t.Fatalf("a platform within its targets failed: %v", v.Reasons)
	}
	for _, c := range []struct {
		name   string
		change func(*report)
		want   string
	}{
		{"memory", func(r *report) { r.Platform.RSS.Processes[0].Max = 513 }, "resident memory, pid 7: max 513 MiB"},
		{"p99", func(r *report) { r.Platform.Many.StadiumLatency.P99 = duration(11100 * time.Microsecond) }, "compact p99 of the stadiums, every schedule read vs one: 11.1ms"},
		{"no p99", func(r *report) { r.Platform.One.Latency.P99 = 0 }, "compact p99"},
		{"skipped", func(r *report) { r.Platform.Many.Skipped = 3 }, "phase many: 3 reads skipped"},
		{"5xx", func(r *report) { r.Platform.One.Responses["503"] = 2 }, "503 ×2"},
		{"few", func(r *report) { r.Platform.One.Responses[keyOK] = 99 }, "phase one: 99 reads answered 200, too few"},
		{"wrong map", func(r *report) { r.Platform.Many.BadSamples = []string{"schedule 4: short"} }, "schedule 4: short"},
		{"watcher", func(r *report) { r.Platform.Watch.Error = "schedule 3: stream: EOF" }, "a stadium's watcher: schedule 3"},
		{"undeleted", func(r *report) {
			r.Platform.Setup.Queues, r.Platform.Setup.DeleteErrors = 2, []string{"delete queue: HTTP 500"}
		}, "2 queues not deleted"},
	} {
		r := platformOK()
		c.change(r)
		v := judgePlatform(r, false)
		if v.Pass || !slices.ContainsFunc(v.Reasons, func(s string) bool { return strings.Contains(s, c.want) }) {
			t.Errorf("%s: verdict %+v; want a failure saying %q", c.name, v, c.want)
		}
	}
	if v := judgePlatform(platformOK(), true); v.Pass {
		t.Error("an interrupted run passed")
	}
}

func TestParseConfigPlatform(t *testing.T) {
	pid := fmt.Sprint(os.Getpid())
	cfg, err := parseConfig([]string{"-scenario", "platform", "-pids", pid}, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Platform
	if p.Schedules != 10_000 || p.Stadiums != 100 || p.Queues != 1000 || p.halls() != 9900 || p.StadiumVenue.capacity() != 80_000 ||
		p.RSSLimitMiB != 512 || cfg.Duration != time.Minute || !slices.Equal(p.PIDs, []int{os.Getpid()}) {
		t.Errorf("defaults: %+v, duration %s", p, cfg.Duration)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-pids or -pid-files is required"},
		{[]string{"-pids", pid, "-stadiums", "0"}, "-stadiums must be 1..-schedules"},
		{[]string{"-pids", pid, "-schedules", "5", "-stadiums", "6"}, "-stadiums must be 1..-schedules (5)"},
		{[]string{"-pids", pid, "-schedules", "5", "-stadiums", "1", "-queues", "6"}, "-queues must be 0..-schedules"},
		{[]string{"-pids", pid, "-hall-share", "1.5"}, "-hall-share must be 0..1"},
		{[]string{"-pids", pid, "-duration", "1s"}, "-duration must be at least 2s"},
		{[]string{"-pids", pid, "-stadium-sections", "100", "-stadium-rows", "20", "-stadium-row-seats", "60"}, "the stadium:"},
		{[]string{"-pid-files", filepath.Join(t.TempDir(), "*.pid")}, "-pid-files: no pid file"},
	} {
		_, err := parseConfig(append([]string{"-scenario", "platform"}, c.args...), testEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v; want %q", c.args, err, c.want)
		}
	}
}

// A file of ids is read back as written, refused when its schedules are
// of another shape, and absent means none made yet.
func TestPlatformSchedulesFile(t *testing.T) {
	cfg, err := parseConfig([]string{"-scenario", "platform", "-pids", "1", "-schedules", "5", "-stadiums", "2", "-queues", "0"}, testEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Platform
	path := filepath.Join(t.TempDir(), "ids.json")
	none, err := loadPlatformSchedules(path, p)
	if err != nil || len(none.Stadiums)+len(none.Halls) != 0 {
		t.Fatalf("no file yet: %+v, %v", none, err)
	}
	none.Stadiums, none.Halls = []int64{1, 2}, []int64{3, 4, 5}
	if err := savePlatformSchedules(path, none); err != nil {
		t.Fatal(err)
	}
	back, err := loadPlatformSchedules(path, p)
	if err != nil || !slices.Equal(back.Stadiums, []int64{1, 2}) || !slices.Equal(back.Halls, []int64{3, 4, 5}) {
		t.Errorf("read back %+v, %v", back, err)
	}
	if q := back.queued(3); !slices.Equal(q, []int64{1, 2, 3}) {
		t.Errorf("queued(3) = %v; want the stadiums first", q)
	}
	p.HallSeats++
	if _, err := loadPlatformSchedules(path, p); err == nil || !strings.Contains(err.Error(), "give another file") {
		t.Errorf("halls of another size: %v", err)
	}
}

// The many-schedules phase goes round the stadiums, and sends about its
// share of the reads to the halls.
func TestSpreadReads(t *testing.T) {
	pick := spreadReads([]int64{1, 2, 3}, []int64{100, 101}, 0.25)
	var stadiums []int64
	halls := 0
	for n := range 4000 {
		if id := pick(n); id >= 100 {
			halls++
		} else {
			stadiums = append(stadiums, id)
		}
	}
	if halls < 900 || halls > 1100 {
		t.Errorf("%d of 4000 reads of halls; want about a quarter", halls)
	}
	if !slices.Equal(stadiums[:6], []int64{1, 2, 3, 1, 2, 3}) {
		t.Errorf("stadiums read %v...; want each in turn", stadiums[:6])
	}
	onlyStadiums := spreadReads([]int64{7}, nil, 1)
	if onlyStadiums(0) != 7 {
		t.Error("without halls, a hall's share read no stadium")
	}
}

// Against the fake service: the platform is made, its ids written, and a
// second run with the same file makes nothing; both phases read the
// schedules they should, each map checked whole once.
func TestPlatformReusesItsSchedules(t *testing.T) {
	f := newFakeAPI(t)
	urls, _ := f.serve(t, 1)
	ids := filepath.Join(t.TempDir(), "ids.json")
	args := []string{"-scenario", "platform", "-schedules", "6", "-stadiums", "2", "-queues", "0", "-stadium-sections", "2",
		"-stadium-rows", "2", "-stadium-row-seats", "5", "-duration", "2s", "-read-rate", "150", "-ids-file", ids, "-pids", fmt.Sprint(os.Getpid())}
	first := mustHammer(t, t.Context(), mustConfig(t, urls, args...))
	set := first.Platform.Setup
	if set.MadeStadiums != 2 || set.MadeHalls != 4 || set.Reused != 0 {
		t.Fatalf("first run made %+v; want 2 stadiums and 4 halls\n%s", set, textOf(t, first))
	}
	one, many := first.Platform.One, first.Platform.Many
	if one.Schedules != 1 || one.Stadiums != 1 || many.Stadiums != 2 || many.Schedules < 3 {
		t.Errorf("phases read %d (%d stadiums) and %d (%d stadiums) schedules; want one stadium, then both and halls\n%s",
			one.Schedules, one.Stadiums, many.Schedules, many.Stadiums, textOf(t, first))
	}
	if len(one.BadSamples)+len(many.BadSamples) > 0 || one.Checked != 1 || many.Checked != many.Schedules-1 {
		t.Errorf("maps checked whole: %d and %d (%v %v); want each schedule's first read", one.Checked, many.Checked, one.BadSamples, many.BadSamples)
	}
	if first.Platform.Watch.Streams != 2 || first.Platform.Watch.Error != "" || first.Platform.RSS.Processes[0].Unread {
		t.Errorf("watch %+v, memory %+v", first.Platform.Watch, first.Platform.RSS)
	}
	second := mustHammer(t, t.Context(), mustConfig(t, urls, args...))
	if set := second.Platform.Setup; set.MadeStadiums+set.MadeHalls != 0 || set.Reused != 6 {
		t.Errorf("second run: %+v; want all 6 reused", set)
	}
	f.mu.Lock()
	n := len(f.schedules)
	f.mu.Unlock()
	if n != 6 {
		t.Errorf("the fake holds %d schedules; want 6", n)
	}
}

// A file of ids kept from another database is refused before anything
// is read: its schedules are not this service's.
func TestPlatformRefusesAnotherDatabasesIDs(t *testing.T) {
	ids := filepath.Join(t.TempDir(), "ids.json")
	args := []string{"-scenario", "platform", "-schedules", "6", "-stadiums", "2", "-queues", "0", "-stadium-sections", "2",
		"-stadium-rows", "2", "-stadium-row-seats", "5", "-duration", "2s", "-read-rate", "150", "-ids-file", ids, "-pids", fmt.Sprint(os.Getpid())}
	made, _ := newFakeAPI(t).serve(t, 1)
	mustHammer(t, t.Context(), mustConfig(t, made, args...))

	other := newFakeAPI(t)
	for range 6 {
		other.addSchedule(3) // the same ids, other schedules
	}
	urls, _ := other.serve(t, 1)
	_, err := hammer(t.Context(), mustConfig(t, urls, args...), nil)
	if err == nil || !strings.Contains(err.Error(), "-ids-file "+ids+" lists schedule ") ||
		!strings.Contains(err.Error(), " of 20 seats, and the service has it with 3 seats") {
		t.Fatalf("hammer with another database's ids: %v", err)
	}
}
