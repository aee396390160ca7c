package main

import (
	"fmt"
	"strings"
	"time"
)

// perSecond is a figure a second over the run: its mean (the total over
// the time measured) and its busiest interval's.
type perSecond struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// cpuReport is what the run cost: Redis's CPU (% of a core) and commands
// a second, the service's processes' CPU (% of a core, together); each
// nil when not sampled or never read twice.
type cpuReport struct {
	Measured         duration   `json:"measuredMs"`
	RedisCPU         *perSecond `json:"redisCpuPercent,omitempty"`
	RedisCommands    *perSecond `json:"redisCommandsPerSec,omitempty"`
	InstancesCPU     *perSecond `json:"instancesCpuPercent,omitempty"`
	PIDs             []int      `json:"pids,omitempty"`
	Errors           []string   `json:"errors,omitempty"`
	RedisSampled     bool       `json:"redisSampled"`
	InstancesSampled bool       `json:"instancesSampled"`
}

// rateOver sums up a figure read at intervals: the mean is the total
// increase over the total time of the intervals read at both ends (ok),
// the max the fastest such interval's, both times scale.
type rateOver struct {
	total, seconds, max float64
	n                   int
}

func (r *rateOver) add(increase, seconds, scale float64) {
	if seconds <= 0 {
		return
	}
	r.total += increase * scale
	r.seconds += seconds
	r.max = max(r.max, increase*scale/seconds)
	r.n++
}

func (r *rateOver) result() *perSecond {
	if r.n == 0 {
		return nil
	}
	return &perSecond{Mean: r.total / r.seconds, Max: r.max}
}

// summarizeCPU turns the readings into rates a second.
func summarizeCPU(readings []cpuReading, errs []string, redisSampled bool, pids []int) *cpuReport {
	if !redisSampled && len(pids) == 0 {
		return nil
	}
	c := &cpuReport{PIDs: pids, Errors: errs, RedisSampled: redisSampled, InstancesSampled: len(pids) > 0}
	var redisCPU, commands, procs rateOver
	for i := 1; i < len(readings); i++ {
		a, b := readings[i-1], readings[i]
		dt := b.At.Sub(a.At).Seconds()
		if a.RedisOK && b.RedisOK {
			redisCPU.add(b.RedisCPU-a.RedisCPU, dt, 100)
			commands.add(float64(b.RedisCommands-a.RedisCommands), dt, 1)
		}
		if a.ProcOK && b.ProcOK {
			procs.add(float64(b.ProcTicks-a.ProcTicks), dt, 100.0/clockTicks)
		}
	}
	if len(readings) > 1 {
		c.Measured = duration(readings[len(readings)-1].At.Sub(readings[0].At))
	}
	c.RedisCPU, c.RedisCommands, c.InstancesCPU = redisCPU.result(), commands.result(), procs.result()
	return c
}

// writeCPUText prints what the run cost, if it was sampled.
func writeCPUText(p printer, c *cpuReport) {
	if c == nil {
		return
	}
	show := func(s *perSecond, unit string) string {
		if s == nil {
			return "not read"
		}
		return fmt.Sprintf("mean %.1f%s, busiest second %.1f%s", s.Mean, unit, s.Max, unit)
	}
	p("cpu:\tover %s, a reading every %s", time.Duration(c.Measured).Round(time.Millisecond), cpuInterval)
	if c.RedisSampled {
		p("  redis cpu:\t%s of a core", show(c.RedisCPU, "%"))
		p("  redis commands/s:\t%s", show(c.RedisCommands, ""))
	}
	if c.InstancesSampled {
		p("  instances' cpu:\t%s of a core, pids %s", show(c.InstancesCPU, "%"), joinInts(c.PIDs))
	}
	for _, e := range c.Errors {
		p("  e.g.\t%s", e)
	}
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
