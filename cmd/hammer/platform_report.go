package main

import (
	"fmt"
	"slices"
	"time"
)

// minPhaseReads is the fewest 200s a phase needs for its p99 to mean
// anything: a hundred put one read beyond it.
const minPhaseReads = 100

// platformReport is -scenario platform's part of the report.
type platformReport struct {
	Settings platformConfig `json:"settings"`
	Setup    platformSetup  `json:"setup"`
	Watch    platformWatch  `json:"watch"`
	// One is the phase reading one stadium, Many the phase reading them
	// all and the halls.
	One        readPhase `json:"one"`
	Many       readPhase `json:"many"`
	RSS        rssReport `json:"rss"`
	Targets    []target  `json:"targets"`
	TargetsMet bool      `json:"targetsMet"`
}

// platformWatch is what the watchers of the stadiums saw: Resumed counts
// the streams reopened after the server ended them, Error is the first
// stream lost.
type platformWatch struct {
	Streams       int    `json:"streams"`
	SnapshotBytes int    `json:"snapshotBytes"`
	Resumed       int64  `json:"resumed"`
	Error         string `json:"error,omitempty"`
}

// rssReport is every process's resident memory over the run.
type rssReport struct {
	LimitMiB  int          `json:"limitMiB"`
	Readings  int          `json:"readings"`
	Processes []rssProcess `json:"processes"`
	Errors    []string     `json:"errors,omitempty"`
}

// rssProcess is one process's resident memory (MiB): the most while its
// schedules were made (Setup), the most once the platform was up (Max:
// watched and read; Unread when never read then) and by phase, and the
// last reading.
type rssProcess struct {
	PID    int     `json:"pid"`
	Setup  float64 `json:"setupMaxMiB"`
	Max    float64 `json:"maxMiB"`
	One    float64 `json:"oneMaxMiB"`
	Many   float64 `json:"manyMaxMiB"`
	Last   float64 `json:"lastMiB"`
	Unread bool    `json:"unread,omitempty"`
}

// summarizeRSS sums the readings up process by process.
func summarizeRSS(readings []rssReading, errs []string, pids []int, limitMiB int) rssReport {
	r := rssReport{LimitMiB: limitMiB, Readings: len(readings), Errors: errs}
	for i, pid := range pids {
		p := rssProcess{PID: pid, Unread: true}
		for _, reading := range readings {
			b := reading.Bytes[i]
			if b < 0 {
				continue
			}
			mib := float64(b) / (1 << 20)
			p.Last = mib
			switch reading.Stage {
			case stageSetup:
				p.Setup = max(p.Setup, mib)
				continue
			case stageOne:
				p.One = max(p.One, mib)
			case stageMany:
				p.Many = max(p.Many, mib)
			}
			p.Max, p.Unread = max(p.Max, mib), false
		}
		r.Processes = append(r.Processes, p)
	}
	return r
}

// judgePlatform weighs the run against the platform's targets, each
// process's memory and the stadiums' p99 with every schedule read, and
// checks that every read and watcher did its part.
func judgePlatform(r *report, interrupted bool) verdict {
	pr := r.Platform
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	if interrupted {
		fail("run interrupted")
	}
	pr.Targets = platformTargets(pr)
	pr.TargetsMet = true
	for _, t := range pr.Targets {
		if !t.Met {
			pr.TargetsMet = false
			fail("%s: %s, want %s", t.Name, t.Shown, t.Want)
		}
	}
	for _, ph := range []readPhase{pr.One, pr.Many} {
		judgeResponses(ph.Responses, func(k string) bool { return k == keyOK || k == keyCanceled }, "phase "+ph.Name+" reads", ph.TransportErrs, fail)
		if ph.Skipped > 0 {
			fail("phase %s: %d reads skipped, due while %d were in flight: the service fell behind the rate", ph.Name, ph.Skipped, r.C)
		}
		if ph.Responses[keyOK] < minPhaseReads {
			fail("phase %s: %d reads answered 200, too few for a p99 (at least %d)", ph.Name, ph.Responses[keyOK], minPhaseReads)
		}
		if len(ph.BadSamples) > 0 {
			fail("phase %s: %d of %d maps read whole were wrong (e.g. %s)", ph.Name, len(ph.BadSamples), ph.Checked, ph.BadSamples[0])
		}
	}
	if pr.Watch.Error != "" {
		fail("a stadium's watcher: %s", pr.Watch.Error)
	}
	if n := len(pr.Setup.DeleteErrors); n > 0 {
		fail("%d queues not deleted (e.g. %s)", pr.Setup.Queues-pr.Setup.QueuesDeleted, pr.Setup.DeleteErrors[0])
	}
	r.targetsJudged = true
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// platformTargets are the targets the verdict judges: every process's
// resident memory within the limit once the platform is up, and the p99
// of the stadiums' reads while every schedule is read at most the
// one-stadium phase's times (1 + tolerance). Stadiums are weighed against
// a stadium: a hall's read is most often the first of its schedule since
// the instance started (its image loaded from PostgreSQL), a cost of its
// own that the report shows beside. The tolerance is there because each
// p99 comes from a few thousand reads on a machine shared with the
// service: a difference within the noise of two such p99s is not the
// platform's cost.
func platformTargets(pr *platformReport) []target {
	var ts []target
	limit := float64(pr.RSS.LimitMiB)
	for _, p := range pr.RSS.Processes {
		t := target{Name: fmt.Sprintf("resident memory, pid %d", p.PID), Want: fmt.Sprintf("<= %d MiB", pr.RSS.LimitMiB), Value: p.Max,
			Shown: fmt.Sprintf("max %.0f MiB", p.Max), Met: !p.Unread && p.Max <= limit}
		if p.Unread {
			t.Shown = "not read once the platform was up"
		}
		ts = append(ts, t)
	}
	one, many := time.Duration(pr.One.Latency.P99), time.Duration(pr.Many.StadiumLatency.P99)
	bound := time.Duration(float64(one) * (1 + pr.Settings.P99Tolerance))
	ts = append(ts, target{Name: "compact p99 of the stadiums, every schedule read vs one", Want: fmt.Sprintf("<= %s (one's %s + %.0f%%)",
		bound.Round(10*time.Microsecond), pr.One.Latency.P99, 100*pr.Settings.P99Tolerance),
		Value: float64(many) / float64(time.Millisecond), Shown: pr.Many.StadiumLatency.P99.String(), Met: one > 0 && many > 0 && many <= bound})
	return ts
}

// writePlatformText prints a platform report's figures and returns its
// targets.
func writePlatformText(p printer, r *report) []target {
	pr := r.Platform
	s, set := pr.Settings, pr.Setup
	p("platform:\t%d schedules: %d stadiums (%s), %d halls of %d seats; %d with an open queue nobody joins",
		s.Schedules, s.Stadiums, s.StadiumVenue.describe(), s.halls(), s.HallSeats, s.Queues)
	reused := "none reused"
	if s.IDsFile != "" {
		reused = fmt.Sprintf("%d reused from %s", set.Reused, s.IDsFile)
	}
	p("setup:\t%d stadiums and %d halls made in %s (%d at once; the slowest stadium %s), %s", set.MadeStadiums, set.MadeHalls,
		set.Made, s.SetupWorkers, set.SlowestStadium, reused)
	queues := fmt.Sprintf("%d deleted after", set.QueuesDeleted)
	if set.Kept {
		queues = "kept open (-keep)"
	}
	p("  queues:\t%d put in %s, %s", set.Queues, set.QueuesPut, queues)
	watchErr := ""
	if pr.Watch.Error != "" {
		watchErr = "; lost: " + pr.Watch.Error
	}
	p("  watchers:\t%d streams (compact) opened in %s, a snapshot %d B; %d reopened%s", pr.Watch.Streams, set.Watched,
		pr.Watch.SnapshotBytes, pr.Watch.Resumed, watchErr)
	for _, ph := range []readPhase{pr.One, pr.Many} {
		p("phase %s:\t%d reads in %s: %.0f/s (asked %.0f/s), %d skipped, %d late (the hammer stalled); %d schedules read, %d of them stadiums",
			ph.Name, ph.Sent, ph.Wall, ph.PerSec, ph.Rate, ph.Skipped, ph.Late, ph.Schedules, ph.Stadiums)
		p("  latency, 200:\t%s", ph.Latency)
		p("  stadiums' 200:\t%s", ph.StadiumLatency)
		if ph.HallLatency != (latency{}) {
			p("  halls' 200:\t%s", ph.HallLatency)
		}
		p("  200 bodies:\t%.0f B on the wire on average, %d gzip-compressed; %d read whole", ph.BytesPerOK, ph.GzipOK, ph.Checked)
		writeResponses(p, ph.Responses, max(ph.Sent, 1), slices.Concat(ph.TransportErrs, ph.BadSamples))
	}
	p("resident memory:\t%d readings, one a second", pr.RSS.Readings)
	for _, proc := range pr.RSS.Processes {
		p("  pid %d:\tmax %.0f MiB (one stadium %.0f, many %.0f), last %.0f; while made %.0f", proc.PID, proc.Max, proc.One, proc.Many, proc.Last, proc.Setup)
	}
	for _, e := range pr.RSS.Errors {
		p("  e.g.\t%s", e)
	}
	return pr.Targets
}
