package main

// -scenario on-sales: many on-sales at once on one service, each its own.
//
//  1. With -redis-url, -pids or -pid-files, the CPU sampler reads once
//     before anything is made: a target it cannot read stops the run.
//  2. -idle-queues schedules of one seat are made, each with a queue open
//     (admitPerSecond idleAdmitRate) that nobody joins.
//  3. -schedules fresh venues are made as on-sale's is (the first the
//     stadium, with -stadium), each with -users buyers of its own (the
//     stadium -stadium-scale times as many), and their queues are put,
//     all opening at once, each admitting -admit-rate a second (the
//     stadium -stadium-scale times as fast).
//  4. Every buyer of every sale does what an on-sale's does (onsale.go),
//     all joining over the same -join-window, while the sampler reads
//     once a second. With -schedules 0 nobody buys: the sampler reads
//     for -duration.
//  5. Each sale is read back and its queue deleted, as on-sale's; the idle
//     queues are deleted too, unless -keep.
//
// The report (onsales_report.go) gives each schedule's admission
// accuracy, inversions, seats sold, hold p99 and 5xx, the verdict against
// the platform's targets, and the CPU of Redis and of the instances.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// hammerOnSales runs -scenario on-sales end to end.
func hammerOnSales(ctx context.Context, sess *session) (*report, error) {
	cfg, m := sess.cfg, sess.cfg.OnSales
	sampler, err := newCPUSampler(ctx, m.RedisURL, m.PIDs)
	if err != nil {
		return nil, err
	}
	defer sampler.close()
	idle := &idleReport{Queues: m.IdleQueues, Kept: m.Keep}
	var idleIDs []int64
	// The idle queues go after the run, however it ends, unless kept:
	// before the verdict, which judges their deletion, or when the run
	// cannot be carried out.
	deleteIdle := func() {
		if !m.Keep && len(idleIDs) > 0 {
			idle.Deleted, idle.Errors = deleteIdleQueues(context.WithoutCancel(ctx), sess, idleIDs)
		}
		idleIDs = nil
	}
	defer deleteIdle()
	if m.IdleQueues > 0 {
		began := time.Now()
		idleIDs, err = makeIdleQueues(ctx, sess, m.IdleQueues)
		idle.Made = duration(time.Since(began))
		if err != nil {
			return nil, err
		}
	}
	sales, err := newSales(ctx, sess)
	if err != nil {
		return nil, err
	}
	// Every queue is put before any buyer joins; the opening is planned a
	// moment after the puts are likely done, and a buyer whose time came
	// before they were joins at once.
	start := time.Now().Add(100*time.Millisecond + time.Duration(len(sales))*10*time.Millisecond)
	if err := openSales(ctx, sess.admin, sales, start); err != nil {
		return nil, err
	}

	stopCPU := sampler.start(ctx)
	var runs [][]buyerRun
	var samples [][]queueSample
	if len(sales) == 0 {
		sleepUntil(ctx, start.Add(cfg.Duration))
	} else {
		runs, samples = runSales(ctx, sess, sales)
	}
	readings, cpuErrs := stopCPU()
	wall := time.Since(start)

	backs := make([]readBackOnSale, len(sales))
	var next atomic.Int64
	each(min(len(sales), idleSetupWorkers), func() {
		for i := int(next.Add(1) - 1); i < len(sales); i = int(next.Add(1) - 1) {
			backs[i] = sales[i].readBack(ctx, sess.admin, runs[i])
			backs[i].samples = samples[i]
		}
	})
	r := summarizeOnSales(cfg, sess.id, sales, runs, backs, wall)
	r.OnSales.Idle = idle
	r.OnSales.CPU = summarizeCPU(readings, cpuErrs, m.RedisURL != "", m.PIDs)
	deleteIdle()
	weighOnSales(r.OnSales)
	r.Verdict = judgeOnSales(r, ctx.Err() != nil)
	return r, nil
}

// newSales makes each schedule's venue and mints its buyers: the first a
// stadium with -stadium.
func newSales(ctx context.Context, sess *session) ([]*sale, error) {
	cfg, m := sess.cfg, sess.cfg.OnSales
	sales := make([]*sale, m.Schedules)
	for i := range sales {
		c := cfg
		name := "hall"
		if i == 0 && m.Stadium {
			c.OnSale, c.Users, name = m.stadiumSale(cfg.OnSale), cfg.Users*m.StadiumScale, "stadium"
			c.Duration = max(cfg.Duration, c.OnSale.defaultDuration(c.Users))
		}
		s, err := newSale(ctx, sess, c, fmt.Sprintf("hammer %s on-sales %s %d", sess.id, name, i), fmt.Sprintf("%s-s%d", sess.id, i))
		if err != nil {
			return nil, fmt.Errorf("schedule %d of %d: %w", i+1, len(sales), err)
		}
		s.stadium = i == 0 && m.Stadium
		sales[i] = s
	}
	return sales, nil
}

// openSales puts every sale's queue, all opening at once.
func openSales(ctx context.Context, admin string, sales []*sale, start time.Time) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	each(min(len(sales), idleSetupWorkers), func() {
		for i := int(next.Add(1) - 1); i < len(sales); i = int(next.Add(1) - 1) {
			if err := sales[i].open(ctx, admin, start); err != nil {
				mu.Lock()
				first = cmpErr(first, fmt.Errorf("queue of schedule %d: %w", sales[i].venue.ID, err))
				mu.Unlock()
			}
		}
	})
	return first
}

// cmpErr is the first error of the two that is not nil.
func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// runSales runs every sale's buyers at once and waits for them all.
func runSales(ctx context.Context, sess *session, sales []*sale) ([][]buyerRun, [][]queueSample) {
	total := 0
	for _, s := range sales {
		total += len(s.users)
	}
	var done atomic.Int64
	onTick, finish := progressBar(sess.progressOut, int64(total), "buyers done", func(int64, time.Duration) int64 { return done.Load() })
	stopTicks := tickWhile(onTick, sales[0].start, &done)
	runs := make([][]buyerRun, len(sales))
	samples := make([][]queueSample, len(sales))
	var wg sync.WaitGroup
	for i, s := range sales {
		wg.Go(func() { runs[i], samples[i] = s.run(ctx, sess.admin, &done) })
	}
	wg.Wait()
	stopTicks()
	finish()
	return runs, samples
}
