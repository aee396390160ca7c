package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
)

// Three on-sales at once against the real service, the first a small
// stadium with twice the buyers and rate, beside two idle queues: every
// sale is judged as on-sale's and sells out, each has a line of its own,
// the idle queues are deleted, and the CPU of Redis and of this process
// (which serves the instances) is read.
func TestOnSalesAgainstTheService(t *testing.T) {
	urls := serveService(t, 2)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "on-sales", "-schedules", "3", "-rows", "2", "-row-seats", "5",
		"-quantity", "2-4", "-users", "8", "-join-window", "1s", "-admit-rate", "8", "-c", "8", "-duration", "40s",
		"-stadium", "-stadium-sections", "2", "-stadium-rows", "2", "-stadium-row-seats", "5", "-stadium-scale", "2",
		"-idle-queues", "2", "-redis-url", lockenv.RedisURL(t), "-pids", fmt.Sprint(os.Getpid())))
	text := textOf(t, r)
	m := r.OnSales
	if m == nil || len(m.Sales) != 3 {
		t.Fatalf("on-sales %+v", m)
	}
	for i, s := range m.Sales {
		wantBuyers, wantRate := 8, 8
		if i == 0 {
			wantBuyers, wantRate = 16, 16
		}
		if !s.Verdict.Pass || s.Stadium != (i == 0) || s.Buyers != wantBuyers || s.AdmitRate != wantRate || s.Capacity != 20 && i == 0 ||
			s.Capacity != 10 && i > 0 || s.Sale.Admitted != wantBuyers || s.SoldShare != 1 || s.Inversions != 0 || s.ServerErrors != 0 || s.HoldP99 <= 0 {
			t.Errorf("schedule %d: %+v", i, s)
		}
	}
	if i := m.Idle; i == nil || i.Queues != 2 || i.Deleted != 2 || len(i.Errors) > 0 {
		t.Errorf("idle queues %+v", m.Idle)
	}
	if c := m.CPU; c == nil || c.RedisCommands == nil || c.RedisCommands.Mean <= 0 || c.RedisCPU == nil || c.InstancesCPU == nil ||
		c.InstancesCPU.Mean <= 0 || c.InstancesCPU.Max < c.InstancesCPU.Mean {
		t.Errorf("cpu %+v", m.CPU)
	}
	if m.HallsHoldLatency.P99 <= 0 || r.Responses["201 (join)"] != 32 || len(m.HallsHoldsOverTime) == 0 || m.HallsHoldsOverTime[0].Holds == 0 {
		t.Errorf("halls' holds %+v, responses %v", m.HallsHoldLatency, r.Responses)
	}
	// Three buyers a second per hall for a second or so: no queue has a
	// whole window with buyers left waiting, so the accuracy is not met.
	if m.TargetsMet || r.Verdict.Pass || !strings.Contains(strings.Join(r.Verdict.Reasons, "\n"), "no window weighed in any of the 3 queues") {
		t.Errorf("targets met %v, verdict %+v", m.TargetsMet, r.Verdict)
	}
	for _, want := range []string{"(stadium)", "2 open with nobody in them", "2 deleted after the run", "halls' holds:", "by when they were sent, per 10s from the opening", "redis commands/s:",
		"instances' cpu:", "every hall sold", "no window weighed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text report lacks %q:\n%s", want, text)
		}
	}
}

// Idle queues alone, measured for -duration: made, measured, deleted.
func TestOnSalesIdleOnly(t *testing.T) {
	urls := serveService(t, 1)
	r := mustHammer(t, t.Context(), mustConfig(t, urls, "-scenario", "on-sales", "-schedules", "0", "-idle-queues", "3", "-duration", "2s",
		"-redis-url", lockenv.RedisURL(t)))
	m := r.OnSales
	if m == nil || len(m.Sales) != 0 || m.Idle.Queues != 3 || m.Idle.Deleted != 3 || m.CPU == nil || m.CPU.RedisCommands == nil ||
		time.Duration(r.Wall) < 2*time.Second || time.Duration(m.CPU.Measured) < time.Second {
		t.Fatalf("report %+v, on-sales %+v", r, m)
	}
	if len(m.Targets) != 2 { // Redis's CPU and commands; no pids given
		t.Errorf("targets %+v", m.Targets)
	}
}

// A window's accuracy is admitted ÷ (rate × its length); windows at whose
// end nobody waited are left out; the worst is the furthest from 1.
func TestAccuracyOf(t *testing.T) {
	windows := []admissionCount{{PerSec: 5}, {PerSec: 4.75}, {PerSec: 5.5}, {PerSec: 2, Partial: true}}
	a := accuracyOf(windows, 5)
	if len(a.Windows) != 3 || a.Windows[1] != 0.95 || a.Worst != 1.1 {
		t.Fatalf("accuracy %+v", a)
	}
	if a := accuracyOf([]admissionCount{{PerSec: 4.5}, {PerSec: 5.2}}, 5); a.Worst != 0.9 {
		t.Fatalf("worst %v, want the slow window's 0.9", a.Worst)
	}
	if a := accuracyOf([]admissionCount{{PerSec: 1, Partial: true}}, 5); len(a.Windows) != 0 {
		t.Fatalf("a partial window weighed: %+v", a)
	}
}

// The verdict follows the targets: a queue off its rate, an inversion, a
// hall not sold (but not the stadium), a 5xx, or a sale failing on-sale's
// own checks fails the run.
func TestJudgeOnSales(t *testing.T) {
	good := func() *report {
		sale := func(id int64, stadium bool, sold float64) scheduleSale {
			return scheduleSale{Schedule: id, Stadium: stadium, Accuracy: accuracy{Windows: []float64{1, 0.97}, Worst: 0.97}, SoldShare: sold,
				Verdict: verdict{Pass: true}, Sale: &onSaleReport{}}
		}
		return &report{OnSales: &onSalesReport{Sales: []scheduleSale{sale(1, true, 0.1), sale(2, false, 1), sale(3, false, 0.995)},
			Idle: &idleReport{Queues: 2, Deleted: 2}}}
	}
	judged := func(r *report) *report {
		weighOnSales(r.OnSales)
		r.Verdict = judgeOnSales(r, false)
		return r
	}
	if r := judged(good()); !r.Verdict.Pass || !r.OnSales.TargetsMet || len(r.OnSales.Targets) != 4 {
		t.Fatalf("good run: %+v, targets %+v", r.Verdict, r.OnSales.Targets)
	}
	for _, tt := range []struct {
		change func(m *onSalesReport)
		want   string
	}{
		{func(m *onSalesReport) { m.Sales[2].Accuracy = accuracy{Windows: []float64{1.06}, Worst: 1.06} }, "worst 1.060 (schedule 3)"},
		{func(m *onSalesReport) { m.Sales[1].Accuracy = accuracy{} }, "1 queues with no window weighed"},
		{func(m *onSalesReport) {
			for i := range m.Sales {
				m.Sales[i].Accuracy = accuracy{HeldBack: 3}
			}
		}, "no window weighed; 3 queues held back by their maxActive in every window"},
		{func(m *onSalesReport) { m.Sales[0].Inversions = 2 }, "target not met: inversions, every queue: 2"},
		{func(m *onSalesReport) { m.Sales[2].SoldShare = 0.98 }, "least 98.0% (schedule 3)"},
		{func(m *onSalesReport) { m.Sales[1].ServerErrors = 1 }, "target not met: 5xx, every schedule: 1"},
		{func(m *onSalesReport) { m.Sales[1].Verdict = verdict{Reasons: []string{"1 buyers: hold failed"}} }, "schedule 2: 1 buyers: hold failed"},
		{func(m *onSalesReport) { m.Idle.Deleted = 1; m.Idle.Errors = []string{"boom"} }, "1 of 2 idle queues not deleted: boom"},
	} {
		r := good()
		tt.change(r.OnSales)
		assertFailsWith(t, judged(r), tt.want)
	}
	// A queue whose maxActive was full whenever its buyers waited is not
	// weighed against its rate, and says so; the others still are.
	r := good()
	r.OnSales.Sales[0].Accuracy = accuracy{HeldBack: 12}
	if judged(r); !r.Verdict.Pass || !strings.HasSuffix(r.OnSales.Targets[0].Shown, "; 1 queues held back by their maxActive in every window") {
		t.Errorf("a stadium held back: %+v, %+v", r.Verdict, r.OnSales.Targets[0])
	}
	// Idle queues alone: what they cost, as far as it was read.
	r = &report{OnSales: &onSalesReport{Settings: onSalesConfig{IdleQueues: 1000}, Idle: &idleReport{Queues: 1000, Deleted: 1000},
		CPU: &cpuReport{RedisCPU: &perSecond{Mean: 1.5, Max: 3}, RedisCommands: &perSecond{Mean: 1200, Max: 1300}}}}
	assertFailsWith(t, judged(r), "Redis commands a second, mean (1000 idle queues): 1200.0, want <= 1000")
	if len(r.OnSales.Targets) != 2 || !r.OnSales.Targets[0].Met {
		t.Errorf("idle targets %+v", r.OnSales.Targets)
	}
}

func TestParseConfigOnSales(t *testing.T) {
	env := envOf(map[string]string{"AUTH_SECRET": testSecret})
	cfg, err := parseConfig([]string{"-scenario", "on-sales", "-rows", "10", "-row-seats", "50", "-users", "250", "-quantity", "1-4", "-admit-rate", "5",
		"-stadium"}, env, io.Discard)
	m := cfg.OnSales
	if err != nil || m.Schedules != 40 || !m.Stadium || m.StadiumVenue.Sections != 100 || m.StadiumScale != 10 || cfg.OnSale.AdmitRate != 5 ||
		m.stadiumSale(cfg.OnSale).AdmitRate != 50 || m.buyers(cfg.Users) != 49*250 || cfg.Duration != 10*time.Second+100*time.Second+time.Minute {
		t.Errorf("the platform's run: %+v, %s, %v", m, cfg.Duration, err)
	}
	// The stadium's queue capped on its own, or as the halls' are.
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"-stadium", "-stadium-max-active", "200"}, 200},
		{[]string{"-stadium", "-max-active", "30"}, 30},
		{[]string{"-stadium", "-max-active", "30", "-stadium-max-active", "300"}, 300},
	} {
		cfg, err := parseConfig(append([]string{"-scenario", "on-sales"}, tt.args...), env, io.Discard)
		if got := cfg.OnSales.stadiumSale(cfg.OnSale).MaxActive; err != nil || got != tt.want {
			t.Errorf("%q: the stadium's maxActive %d (%v), want %d", tt.args, got, err, tt.want)
		}
	}
	dir := t.TempDir()
	for i, pid := range []string{"101\n", "102"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("api-%d.pid", i+1)), []byte(pid), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err = parseConfig([]string{"-scenario", "on-sales", "-schedules", "0", "-idle-queues", "100", "-duration", "20s", "-pids", "7, 8",
		"-pid-files", filepath.Join(dir, "api-*.pid")}, env, io.Discard)
	if m := cfg.OnSales; err != nil || m.IdleQueues != 100 || fmt.Sprint(m.PIDs) != "[7 8 101 102]" || cfg.Duration != 20*time.Second {
		t.Errorf("idle: %+v, %v", cfg.OnSales, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-schedules", "0", "-idle-queues", "5"}, "-schedules 0 measures the -idle-queues (or, with none, the service at rest) for -duration"},
		{[]string{"-schedules", "-1"}, "-schedules must be 0..10000"},
		{[]string{"-schedules", "0", "-idle-queues", "5", "-duration", "1s", "-stadium"}, "-stadium makes one of the -schedules a stadium"},
		{[]string{"-stadium", "-admit-rate", "2000"}, "the stadium's rate"},
		{[]string{"-stadium", "-stadium-rows", "0"}, "the stadium: -rows must be"},
		{[]string{"-stadium", "-stadium-max-active", "-1"}, "-stadium-max-active must be 0..1000000"},
		{[]string{"-stadium-max-active", "200"}, "-stadium-max-active caps the stadium's queue: give -stadium"},
		{[]string{"-users", "5000"}, "the buyers of every schedule (200000) must be at most 100000"},
		{[]string{"-pids", "x"}, `-pids: "x" is not a pid`},
		{[]string{"-pid-files", filepath.Join(dir, "none-*.pid")}, "-pid-files: no pid file"},
		{[]string{"-keep=maybe"}, "invalid boolean value"},
	} {
		_, err := parseConfig(append([]string{"-scenario", "on-sales"}, tt.args...), env, io.Discard)
		var usage *usageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConfig(%q) = %v, want a usage error containing %q", tt.args, err, tt.want)
		}
	}
}
