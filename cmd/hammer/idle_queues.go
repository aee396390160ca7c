package main

// Idle queues: schedules of one seat each whose queue is open, admitting
// idleAdmitRate a second, with nobody in it. on-sales makes them before
// the run, so that what it measures includes what the service spends on
// queues nobody uses, and deletes them after (unless -keep).

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// idleSetupWorkers is how many idle queues are made or deleted at once.
const idleSetupWorkers = 16

// idleReport is what became of the idle queues.
type idleReport struct {
	Queues  int      `json:"queues"`
	Made    duration `json:"madeInMs"`
	Kept    bool     `json:"kept,omitempty"`
	Deleted int      `json:"deleted"`
	Errors  []string `json:"deleteErrors,omitempty"`
}

// makeIdleQueues makes n schedules with an open, empty queue and returns
// their ids; the first error stops it (the ids made so far are returned
// too, to be deleted).
func makeIdleQueues(ctx context.Context, sess *session, n int) ([]int64, error) {
	ids := make([]int64, n)
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	target := sess.cfg.Targets[0]
	each(idleSetupWorkers, func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n || ctx.Err() != nil {
				return
			}
			id, err := sess.api.createSchedule(ctx, target, sess.admin, fmt.Sprintf("hammer %s idle %d", sess.id, i), 1)
			if err == nil {
				ids[i] = id
				err = sess.api.putQueue(ctx, target, sess.admin, id, time.Now(), idleAdmitRate, 0)
			}
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("idle queue %d: %w", i, err)
				}
				mu.Unlock()
				cancel()
				return
			}
		}
	})
	made := ids[:0]
	for _, id := range ids {
		if id > 0 {
			made = append(made, id)
		}
	}
	return made, first
}

// deleteIdleQueues deletes the queues of ids; it returns how many went,
// and samples of why the others did not.
func deleteIdleQueues(ctx context.Context, sess *session, ids []int64) (deleted int, errs []string) {
	var next, gone atomic.Int64
	var mu sync.Mutex
	target := sess.cfg.Targets[0]
	each(idleSetupWorkers, func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(ids) {
				return
			}
			if err := sess.api.deleteQueue(ctx, target, sess.admin, ids[i]); err != nil {
				mu.Lock()
				errs = appendSamples(errs, err.Error())
				mu.Unlock()
				continue
			}
			gone.Add(1)
		}
	})
	return int(gone.Load()), errs
}

// each runs f in n goroutines and waits for them.
func each(n int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(f)
	}
	wg.Wait()
}
