package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The platform's targets of -scenario on-sales, judged.
const (
	// targetHallSold: every hall sells at least this share of its seats.
	targetHallSold = 0.99
	// An open queue with nobody in it: what the service may spend on
	// all of them together, a second.
	targetIdleRedisCPU      = 2.0   // % of a core
	targetIdleRedisCommands = 1_000 // a second
	targetIdleInstancesCPU  = 5.0   // % of a core, the instances together
)

// onSalesReport is -scenario on-sales's part of the report.
type onSalesReport struct {
	Settings onSalesConfig `json:"settings"`
	// Hall is every hall's sale (the stadium's is in its schedule's
	// detail).
	Hall  onSaleConfig   `json:"hall"`
	Sales []scheduleSale `json:"schedules"`
	// HallsHoldLatency is every hall's holds together, the stadium's
	// left out: what the stadium's crowd must not slow.
	HallsHoldLatency latency `json:"hallsHoldLatencyMs"`
	// HallsHoldsOverTime is the same holds by when they were sent, per
	// holdWindowLength from the first opening.
	HallsHoldsOverTime []holdWindow `json:"hallsHoldsOverTime"`
	Idle               *idleReport  `json:"idle"`
	CPU                *cpuReport   `json:"cpu,omitempty"`
	Targets            []target     `json:"targets"`
	TargetsMet         bool         `json:"targetsMet"`
}

// scheduleSale is one schedule's on-sale, in figures; Sale has it all.
type scheduleSale struct {
	Schedule     int64         `json:"scheduleId"`
	Stadium      bool          `json:"stadium,omitempty"`
	Capacity     int           `json:"capacity"`
	AdmitRate    int           `json:"admitRate"`
	Buyers       int           `json:"buyers"`
	Accuracy     accuracy      `json:"admissionAccuracy"`
	Inversions   int           `json:"inversions"`
	SeatsSold    int           `json:"seatsSold"`
	SoldShare    float64       `json:"soldShare"`
	HoldP99      duration      `json:"holdP99Ms"`
	ServerErrors int           `json:"serverErrors"`
	Verdict      verdict       `json:"verdict"`
	Sale         *onSaleReport `json:"sale"`
}

// accuracy is a queue's admissions against its rate, by its own count:
// for every admissionWindow in which buyers still waited at its end and
// maxActive did not hold admission back, admitted ÷ (rate × the window's
// length) (1: exactly the rate); Worst is the one furthest from 1.
type accuracy struct {
	Windows []float64 `json:"windows"`
	Worst   float64   `json:"worst"`
	// HeldBack counts the windows left unweighed because maxActive's
	// places were full.
	HeldBack int `json:"heldBack,omitempty"`
}

// accuracyOf weighs the queue's windows (serviceWindows) against rate;
// a Partial one, at whose end nobody waited, is not weighed: the line ran
// dry, so it could not admit at the rate; nor is a HeldBack one, in which
// the queue admitted as buyers left, as its maxActive says.
func accuracyOf(windows []admissionCount, rate int) accuracy {
	var a accuracy
	for _, w := range windows {
		if !w.measuresRate() {
			if !w.Partial {
				a.HeldBack++
			}
			continue
		}
		x := w.PerSec / float64(rate)
		a.Windows = append(a.Windows, x)
		if len(a.Windows) == 1 || math.Abs(x-1) > math.Abs(a.Worst-1) {
			a.Worst = x
		}
	}
	return a
}

// summarizeOnSales folds every sale into one report without a verdict or
// targets: each sale as on-sale's (summarizeOnSale), judged as on-sale's
// is, in figures of its own.
func summarizeOnSales(cfg config, runID string, sales []*sale, runs [][]buyerRun, backs []readBackOnSale, wall time.Duration) *report {
	m := &onSalesReport{Settings: cfg.OnSales, Hall: cfg.OnSale}
	r := &report{RunID: runID, Scenario: cfg.Scenario, Targets: cfg.Targets, Duration: duration(cfg.Duration), C: cfg.C, Users: cfg.Users,
		Wall: duration(wall), Responses: map[string]int{}, OnSales: m, targetsJudged: true}
	halls := newLatencyHistogram()
	for i, s := range sales {
		sr := summarizeOnSale(s.cfg, runID, s, runs[i], wall, backs[i])
		or := sr.OnSale
		r.Schedules = append(r.Schedules, s.venue.ID)
		for k, n := range sr.Responses {
			r.Responses[k] += n
		}
		r.Sent += sr.Sent
		r.TransportErrs = appendSamples(r.TransportErrs, sr.TransportErrs...)
		if !s.stadium {
			halls.Merge(or.holdLatencies)
		}
		m.Sales = append(m.Sales, scheduleSale{Schedule: s.venue.ID, Stadium: s.stadium, Capacity: or.Capacity, AdmitRate: s.cfg.OnSale.AdmitRate,
			Buyers: or.Users, Accuracy: accuracyOf(or.ServiceWindows, s.cfg.OnSale.AdmitRate), Inversions: or.Order.Inversions,
			SeatsSold: or.SeatsSold, SoldShare: float64(or.SeatsSold) / float64(max(or.Capacity, 1)), HoldP99: or.HoldLatency.P99,
			ServerErrors: or.ServerErrors, Verdict: judgeOnSale(sr, false), Sale: or})
	}
	if wall > 0 {
		r.Throughput = float64(r.Sent) / wall.Seconds()
	}
	m.HallsHoldLatency = latencyOf(halls)
	m.HallsHoldsOverTime = holdsOverTime(sales, runs, firstOpening(sales))
	r.Latency = m.HallsHoldLatency
	return r
}

// weighOnSales sets the run's figures against the platform's targets:
// with sales, every queue's accuracy, inversions, every hall sold (the
// stadium, whose crowd is not meant to fill it, is left out) and 5xx;
// with idle queues alone, what they cost, as far as it was measured.
func weighOnSales(m *onSalesReport) {
	var targets []target
	if len(m.Sales) > 0 {
		worst, worstAt, unweighed, heldBack := 1.0, int64(0), 0, 0
		inversions, serverErrors, halls, lowest, lowestAt := 0, 0, 0, 1.0, int64(0)
		for _, s := range m.Sales {
			switch {
			case len(s.Accuracy.Windows) == 0 && s.Accuracy.HeldBack > 0:
				heldBack++ // its maxActive held it back whenever buyers waited
			case len(s.Accuracy.Windows) == 0:
				unweighed++
			case math.Abs(s.Accuracy.Worst-1) > math.Abs(worst-1):
				worst, worstAt = s.Accuracy.Worst, s.Schedule
			}
			inversions += s.Inversions
			serverErrors += s.ServerErrors
			if !s.Stadium {
				halls++
				if s.SoldShare < lowest || lowestAt == 0 {
					lowest, lowestAt = s.SoldShare, s.Schedule
				}
			}
		}
		shown := fmt.Sprintf("worst %.3f (schedule %d)", worst, worstAt)
		switch {
		case unweighed == len(m.Sales):
			shown = fmt.Sprintf("no window weighed in any of the %d queues (none had buyers waiting a whole window)", unweighed)
		case unweighed+heldBack == len(m.Sales):
			shown = "no window weighed"
		case worstAt == 0:
			shown = "every window exact"
		}
		if unweighed > 0 && unweighed < len(m.Sales) {
			shown += fmt.Sprintf("; %d queues with no window weighed", unweighed)
		}
		if heldBack > 0 {
			shown += fmt.Sprintf("; %d queues held back by their maxActive in every window", heldBack)
		}
		targets = append(targets,
			target{Name: "every queue's admitted ÷ (rate × 10 s), every window with buyers waiting", Want: fmt.Sprintf("within ±%.0f%%", 100*targetRateBand),
				Value: worst, Shown: shown, Met: unweighed == 0 && heldBack < len(m.Sales) && math.Abs(worst-1) <= targetRateBand},
			target{Name: "inversions, every queue", Want: "0", Value: float64(inversions), Shown: fmt.Sprint(inversions), Met: inversions == 0})
		if halls > 0 {
			targets = append(targets, target{Name: "every hall sold", Want: fmt.Sprintf(">= %.0f%%", 100*targetHallSold), Value: lowest,
				Shown: fmt.Sprintf("least %.1f%% (schedule %d)", 100*lowest, lowestAt), Met: lowest >= targetHallSold})
		}
		targets = append(targets, target{Name: "5xx, every schedule", Want: "0", Value: float64(serverErrors), Shown: fmt.Sprint(serverErrors),
			Met: serverErrors == 0})
	} else if c := m.CPU; c != nil {
		idle := fmt.Sprintf(" (%d idle queues)", m.Settings.IdleQueues)
		cost := func(name string, s *perSecond, limit float64, unit string) {
			if s != nil {
				targets = append(targets, target{Name: name + idle, Want: fmt.Sprintf("<= %g%s", limit, unit), Value: s.Mean,
					Shown: fmt.Sprintf("%.1f%s", s.Mean, unit), Met: s.Mean <= limit})
			}
		}
		cost("Redis CPU a second, mean", c.RedisCPU, targetIdleRedisCPU, "% of a core")
		cost("Redis commands a second, mean", c.RedisCommands, targetIdleRedisCommands, "")
		cost("the instances' CPU a second, mean", c.InstancesCPU, targetIdleInstancesCPU, "% of a core")
	}
	m.Targets, m.TargetsMet = targets, true
	for _, t := range targets {
		m.TargetsMet = m.TargetsMet && t.Met
	}
}

// judgeOnSales passes the run only if it ran to its end, every sale
// passed as an on-sale must (judgeOnSale), the idle queues were deleted
// (unless kept), and every target was met.
func judgeOnSales(r *report, interrupted bool) verdict {
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	m := r.OnSales
	if interrupted {
		fail("run interrupted")
	}
	for _, s := range m.Sales {
		for _, reason := range s.Verdict.Reasons {
			fail("schedule %d: %s", s.Schedule, reason)
		}
	}
	if i := m.Idle; i != nil && !i.Kept && i.Deleted != i.Queues {
		fail("%d of %d idle queues not deleted: %s", i.Queues-i.Deleted, i.Queues, strings.Join(i.Errors, "; "))
	}
	for _, t := range m.Targets {
		if !t.Met {
			fail("target not met: %s: %s, want %s", t.Name, t.Shown, t.Want)
		}
	}
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// writeOnSalesText prints an on-sales report's figures, a line a
// schedule, and returns its targets.
func writeOnSalesText(p printer, r *report) []target {
	m := r.OnSales
	o := m.Hall
	if m.Settings.Schedules == 0 {
		p("on-sales:\tnone: the service measured for %s with %d idle queues", r.Duration, m.Settings.IdleQueues)
	} else {
		p("on-sales:\t%d at once: halls of %s; %d buyers each joining over %s, %.0f%% of it before the opening; quantity %s; admitted %d a second",
			m.Settings.Schedules, o.describe(), r.Users, o.JoinWindow, 100*o.PrequeueShare, quantityRange(o.bestConfig), o.AdmitRate)
	}
	if m.Settings.Stadium && len(m.Sales) > 0 {
		s := m.Sales[0]
		capped := ""
		if n := s.Sale.Sale.MaxActive; n > 0 {
			capped = fmt.Sprintf(", at most %d at once", n)
		}
		p("stadium:\tschedule %d, %d seats, %d buyers, admitted %d a second%s", s.Schedule, s.Capacity, s.Buyers, s.AdmitRate, capped)
	}
	if i := m.Idle; i != nil && i.Queues > 0 {
		after := fmt.Sprintf("%d deleted after the run", i.Deleted)
		if i.Kept {
			after = "kept after the run (-keep)"
		}
		p("idle queues:\t%d open with nobody in them (admitPerSecond %d), made in %s; %s", i.Queues, idleAdmitRate, i.Made, after)
	}
	if len(m.Sales) > 0 {
		p("schedule\tseats\trate/s\tbuyers\tadmitted\tworst window\twindows\tinversions\tsold\thold p99\t5xx\tchecks")
		for _, s := range m.Sales {
			name := fmt.Sprint(s.Schedule)
			if s.Stadium {
				name += " (stadium)"
			}
			checks := "pass"
			if !s.Verdict.Pass {
				checks = fmt.Sprintf("FAIL (%d)", len(s.Verdict.Reasons))
			}
			worst := "none"
			if len(s.Accuracy.Windows) > 0 {
				worst = fmt.Sprintf("%.3f", s.Accuracy.Worst)
			}
			p("%s\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%.1f%%\t%s\t%d\t%s", name, s.Capacity, s.AdmitRate, s.Buyers, s.Sale.Admitted,
				worst, len(s.Accuracy.Windows), s.Inversions, 100*s.SoldShare, s.HoldP99, s.ServerErrors, checks)
		}
		p("halls' holds:\t%s (every hall's together, the stadium's left out)", m.HallsHoldLatency)
		p("\tby when they were sent, per %s from the opening (p50/p99 (holds)): %s", holdWindowLength, holdWindowsText(m.HallsHoldsOverTime))
	}
	writeCPUText(p, m.CPU)
	p("responses:\t%d in %s", r.Sent, r.Wall)
	writeResponses(p, r.Responses, 0, r.TransportErrs)
	return m.Targets
}
