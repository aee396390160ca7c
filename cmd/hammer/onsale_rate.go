package main

import (
	"context"
	"math"
	"sync"
	"time"
)

// targetRateBand: every whole 10 s window in which buyers still wait,
// the queue admits within this share of -admit-rate.
const targetRateBand = 0.05

// queueSample is the queue's count of admissions at a time from the
// opening, how many waited then, and how many admissions held.
type queueSample struct {
	At       time.Duration
	Admitted int64
	Waiting  int64
	Active   int64
}

// sampleQueue reads the queue's counts (the admin's GET) at the opening
// and every admissionWindow after it until ctx ends: the admissions the
// service made, free of the polls' delays. The returned func stops it and
// gives the samples.
func (s *sale) sampleQueue(ctx context.Context, admin string) func() []queueSample {
	ctx, cancel := context.WithCancel(ctx)
	var samples []queueSample
	var wg sync.WaitGroup
	wg.Go(func() {
		for at := time.Duration(0); ; at += admissionWindow {
			if !sleepUntil(ctx, s.opensAt.Add(at)) {
				return
			}
			c, err := s.api.queueCountsOf(ctx, s.cfg.Targets[0], admin, s.venue.ID)
			if err != nil {
				continue // a window twice as long, when the next read succeeds
			}
			samples = append(samples, queueSample{At: time.Since(s.opensAt), Admitted: c.Admitted, Waiting: c.Waiting, Active: c.Active})
		}
	})
	return func() []queueSample {
		cancel()
		wg.Wait()
		return samples
	}
}

// serviceWindows turns the samples into admissions a second per window
// of a queue admitting rate a second, at most maxActive at once (0: no
// cap). A window at whose end nobody waited is Partial (the line ran dry,
// so it could not admit at the rate); one at whose start or end the
// places maxActive leaves were fewer than a second's admissions is
// HeldBack (the queue admits as buyers leave, as maxActive says, not at
// the rate).
func serviceWindows(samples []queueSample, rate, maxActive int) []admissionCount {
	full := func(s queueSample) bool {
		return maxActive > 0 && int64(maxActive)-s.Active < int64(max(rate, 1))
	}
	var out []admissionCount
	for i := 1; i < len(samples); i++ {
		prev, cur := samples[i-1], samples[i]
		n := cur.Admitted - prev.Admitted
		out = append(out, admissionCount{From: duration(prev.At), Admitted: int(n),
			PerSec: float64(n) / (cur.At - prev.At).Seconds(), Partial: cur.Waiting == 0, HeldBack: full(prev) || full(cur)})
	}
	return out
}

// worstRateDeviation is the largest relative distance from rate of the
// windows that are neither Partial nor HeldBack, and how many there were.
func worstRateDeviation(windows []admissionCount, rate float64) (worst float64, weighed int) {
	for _, w := range windows {
		if !w.measuresRate() {
			continue
		}
		weighed++
		worst = max(worst, math.Abs(w.PerSec-rate)/rate)
	}
	return worst, weighed
}
