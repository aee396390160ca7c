package main

// -scenario platform: one service holding a platform's schedules, most of
// them idle, and what that costs its memory and its busiest read.
//
//  1. The memory sampler reads the -pids and -pid-files processes once:
//     a process it cannot read stops the run. It then reads every
//     second to the end, each reading labelled with the run's stage.
//  2. -schedules schedules are on the service: -stadiums stadiums
//     (-stadium-sections × -stadium-rows × -stadium-row-seats) and the
//     rest halls of -hall-seats seats; those -ids-file lists are reused,
//     the rest made, -setup-workers at once. -queues of them, the
//     stadiums first, get a queue open that nobody joins.
//  3. A watcher follows every stadium's live seat map (the compact form)
//     to the end of the run, so the service keeps each stadium's seat
//     image and follows its changes.
//  4. For half of -duration, -read-rate compact reads a second of one
//     stadium only (as if it were the platform's only schedule); for the
//     other half, the same rate spread over every stadium in turn and,
//     -hall-share of it, over the halls at random. The two phases take
//     turns, some 5 s each (phaseSlices).
//  5. The queues are deleted unless -keep (the schedules stay: -ids-file
//     reuses them).
//
// The verdict (platform_report.go): every process's resident memory
// within -rss-limit while the platform is up, the second phase's p99
// within -p99-tolerance of the first's, every read answered 200 with its
// schedule's whole map, none skipped, no watcher lost.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// The stages of a platform run, as the memory readings are labelled.
const (
	stageSetup = "setup" // making the schedules and opening the queues
	stageWatch = "watch" // opening the watchers
	stageOne   = "one"   // reading one stadium
	stageMany  = "many"  // reading every stadium and the halls
)

// hammerPlatform runs -scenario platform end to end.
func hammerPlatform(ctx context.Context, sess *session) (*report, error) {
	cfg, p := sess.cfg, sess.cfg.Platform
	sampler := newRSSSampler(p.PIDs)
	sampler.setStage(stageSetup)
	stopRSS, err := sampler.start()
	if err != nil {
		return nil, fmt.Errorf("resident memory: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			stopRSS()
		}
	}()

	setup := &platformSetup{Queues: p.Queues, Kept: p.Keep}
	stadiums, halls, err := platformOf(ctx, sess, p, setup)
	if err != nil {
		return nil, err
	}
	queued := platformSchedules{Stadiums: stadiums, Halls: halls}.queued(p.Queues)
	began := time.Now()
	err = putQueues(ctx, sess, queued)
	setup.QueuesPut = duration(time.Since(began))
	deleteQueues := func() {
		if !p.Keep && len(queued) > 0 {
			setup.QueuesDeleted, setup.DeleteErrors = deleteIdleQueues(context.WithoutCancel(ctx), sess, queued)
		}
		queued = nil
	}
	defer deleteQueues()
	if err != nil {
		return nil, err
	}

	sampler.setStage(stageWatch)
	watch := newWatcher(cfg.Targets[len(cfg.Targets)-1], 0, formCompact, "reserved")
	defer watch.stop()
	began = time.Now()
	if err := followAll(ctx, watch, stadiums, p.SetupWorkers); err != nil {
		return nil, err
	}
	setup.Watched = duration(time.Since(began))

	sess.api.spreadSources()
	reader := newMapReader(sess.api, cfg.Targets, cfg.C, stadiums, halls, p.StadiumVenue.capacity(), p.HallSeats)
	one := newReadRun(stageOne, func(int) int64 { return stadiums[0] })
	many := newReadRun(stageMany, spreadReads(stadiums, halls, p.HallShare))
	rounds, slice := phaseSlices(cfg.Duration)
	for range rounds {
		for _, ph := range []*readRun{one, many} {
			sampler.setStage(ph.name)
			reader.run(ctx, ph, p.ReadRate, slice)
		}
	}
	readings, rssErrs := stopRSS()
	stopped = true

	watched := platformWatch{Streams: len(stadiums), Resumed: watch.resumed.Load()}
	watch.stop()
	watch.mu.Lock()
	if watch.err != nil {
		watched.Error = watch.err.Error()
	}
	watched.SnapshotBytes = watch.snapshotBytes
	watch.mu.Unlock()
	deleteQueues()

	r := &report{RunID: sess.id, Scenario: cfg.Scenario, Targets: cfg.Targets, C: cfg.C, Duration: duration(cfg.Duration),
		Platform: &platformReport{Settings: p, Setup: *setup, Watch: watched,
			One: reader.result(one, p.ReadRate), Many: reader.result(many, p.ReadRate),
			RSS: summarizeRSS(readings, rssErrs, p.PIDs, p.RSSLimitMiB)}}
	r.Verdict = judgePlatform(r, ctx.Err() != nil)
	return r, nil
}

// platformOf gives the stadiums and halls the run reads: those -ids-file
// lists, and those made to complete them (written back to the file, even
// when making them failed half way).
func platformOf(ctx context.Context, sess *session, p platformConfig, setup *platformSetup) (stadiums, halls []int64, err error) {
	have, err := loadPlatformSchedules(p.IDsFile, p)
	if err != nil {
		return nil, nil, err
	}
	a := newAPI(p.SetupWorkers, len(sess.cfg.Targets), max(sess.cfg.Timeout, setupTimeout), sess.cfg.Client)
	defer a.close()
	defer a.stopOnCancel(ctx)()
	if err := checkReused(ctx, sess, a, p, have); err != nil {
		return nil, nil, err
	}
	have, err = makeMissing(ctx, sess, a, p, have, setup)
	if p.IDsFile != "" && setup.MadeStadiums+setup.MadeHalls > 0 {
		err = cmpErr(err, savePlatformSchedules(p.IDsFile, have))
	}
	if err != nil {
		return nil, nil, err
	}
	return have.Stadiums[:p.Stadiums], have.Halls[:p.halls()], nil
}

// phaseSlice is about how long one phase reads before the other takes
// over: the phases alternate, so that the machine's other work, which
// comes and goes over minutes, weighs on both alike.
const phaseSlice = 5 * time.Second

// phaseSlices cuts d into n pairs of slices, one of each phase, each
// slice about phaseSlice long.
func phaseSlices(d time.Duration) (n int, slice time.Duration) {
	n = max(int(d/(2*phaseSlice)), 1)
	return n, d / time.Duration(2*n)
}

// setupTimeout is the least time a schedule's making may take: a
// stadium's 80,000 seats take seconds on an idle machine and far longer
// while others are made beside it.
const setupTimeout = 5 * time.Minute

// followAll opens w's stream of every schedule, workers at once, and
// returns once every snapshot has arrived.
func followAll(ctx context.Context, w *watcher, schedules []int64, workers int) error {
	errs := make(chan error, len(schedules))
	next := make(chan int64, len(schedules))
	for _, id := range schedules {
		next <- id
	}
	close(next)
	each(min(workers, len(schedules)), func() {
		for id := range next {
			if ctx.Err() == nil {
				errs <- w.follow(ctx, id)
			}
		}
	})
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// spreadReads picks the schedules of the many-schedules phase: every
// stadium in turn, and hallShare of the reads a hall at random, drawn
// afresh each run: a run reusing an earlier run's halls reads others
// than it did, whose images the service has not loaded for it.
func spreadReads(stadiums, halls []int64, hallShare float64) func(n int) int64 {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	turn := 0
	return func(int) int64 {
		if len(halls) > 0 && rng.Float64() < hallShare {
			return halls[rng.IntN(len(halls))]
		}
		id := stadiums[turn%len(stadiums)]
		turn++
		return id
	}
}
