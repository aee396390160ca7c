package main

// The schedules of -scenario platform: made by -setup-workers at once,
// and, with -ids-file, listed in a file that a later run reads to make
// only what is missing (a hundred stadiums take a long while to make).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// platformSchedules are the schedules of a platform, as -ids-file keeps
// them: the stadiums (all of Stadium's shape) and the halls (of HallSeats
// seats each).
type platformSchedules struct {
	Stadium   string  `json:"stadium"`
	HallSeats int     `json:"hallSeats"`
	Stadiums  []int64 `json:"stadiums"`
	Halls     []int64 `json:"halls"`
}

// queued is the schedules whose queues the run opens: the first n,
// stadiums first, as the platform's largest sales are those behind a
// waiting room.
func (s platformSchedules) queued(n int) []int64 {
	all := append(append([]int64{}, s.Stadiums...), s.Halls...)
	return all[:min(n, len(all))]
}

// loadPlatformSchedules reads the schedules path lists (none when path
// is "" or does not exist yet); they must be of the shape p asks for.
func loadPlatformSchedules(path string, p platformConfig) (platformSchedules, error) {
	s := platformSchedules{Stadium: p.StadiumVenue.describe(), HallSeats: p.HallSeats}
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("-ids-file: %w", err)
	}
	var kept platformSchedules
	if err := json.Unmarshal(data, &kept); err != nil {
		return s, fmt.Errorf("-ids-file %s: %w", path, err)
	}
	if kept.Stadium != s.Stadium || kept.HallSeats != s.HallSeats {
		return s, fmt.Errorf("-ids-file %s lists stadiums of %s and halls of %d seats, not %s and %d: give another file",
			path, kept.Stadium, kept.HallSeats, s.Stadium, s.HallSeats)
	}
	return kept, nil
}

// savePlatformSchedules writes s to path whole, or not at all (a run
// interrupted while writing leaves the previous list).
func savePlatformSchedules(path string, s platformSchedules) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("-ids-file: %w", err)
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("-ids-file: %w", err)
	}
	return nil
}

// platformSetup is how the platform came to be: the schedules reused
// from -ids-file and made, how long making them took (and the slowest
// stadium), and the queues opened.
type platformSetup struct {
	Reused         int      `json:"reused"`
	MadeStadiums   int      `json:"madeStadiums"`
	MadeHalls      int      `json:"madeHalls"`
	Made           duration `json:"madeInMs"`
	SlowestStadium duration `json:"slowestStadiumMs"`
	Queues         int      `json:"queues"`
	QueuesPut      duration `json:"queuesPutInMs"`
	Watched        duration `json:"watchersOpenedInMs"`
	QueuesDeleted  int      `json:"queuesDeleted"`
	Kept           bool     `json:"queuesKept,omitempty"`
	DeleteErrors   []string `json:"deleteErrors,omitempty"`
}

// reusedSample is how many of an -ids-file's halls are read back before
// a run: every stadium is, and halls this far apart.
const reusedSample = 100

// checkReused reads back the schedules have lists (every stadium, every
// reusedSample-th hall) and refuses a file whose schedules this service
// does not have as listed: a file kept from another database would have
// the run read the wrong schedules, or none.
func checkReused(ctx context.Context, sess *session, a *api, p platformConfig, have platformSchedules) error {
	layout, err := p.StadiumVenue.layout().check()
	if err != nil {
		return err
	}
	type listed struct {
		id    int64
		seats int
	}
	var check []listed
	for _, id := range have.Stadiums[:min(len(have.Stadiums), p.Stadiums)] {
		check = append(check, listed{id, layout.SeatCount()})
	}
	halls := have.Halls[:min(len(have.Halls), p.halls())]
	for i := 0; i < len(halls); i += reusedSample {
		check = append(check, listed{halls[i], p.HallSeats})
	}
	target := sess.cfg.Targets[0]
	for _, c := range check {
		v, err := a.venue(ctx, target, c.id)
		if err == nil && v.SeatCount == c.seats {
			continue
		}
		found := fmt.Sprintf("has it with %d seats", v.SeatCount)
		if err != nil {
			found = "answers " + err.Error()
		}
		return fmt.Errorf("-ids-file %s lists schedule %d of %d seats, and the service %s: the file was written against another database; give another file",
			p.IDsFile, c.id, c.seats, found)
	}
	return nil
}

// makeMissing makes the stadiums and halls have lacks to reach p's
// numbers, -setup-workers at once, and returns have with them added; the
// first error stops it (what was made is returned too, to be kept).
func makeMissing(ctx context.Context, sess *session, a *api, p platformConfig, have platformSchedules, setup *platformSetup) (platformSchedules, error) {
	stadiums := max(p.Stadiums-len(have.Stadiums), 0)
	halls := max(p.halls()-len(have.Halls), 0)
	setup.Reused = min(len(have.Stadiums), p.Stadiums) + min(len(have.Halls), p.halls())
	total := stadiums + halls
	if total == 0 {
		return have, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		first      error
		slowest    time.Duration
	)
	target, layout := sess.cfg.Targets[0], p.StadiumVenue.layout()
	began := time.Now()
	onTick, finish := progressBar(sess.progressOut, int64(total), "schedules made", func(int64, time.Duration) int64 { return done.Load() })
	stopTicks := tickWhile(onTick, began, &done)
	each(min(p.SetupWorkers, total), func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= total || ctx.Err() != nil {
				return
			}
			// The stadiums first: they take longest, and the watchers
			// need them.
			stadium := i < stadiums
			var id int64
			var err error
			t0 := time.Now()
			err = retryLimited(ctx, func() (err error) {
				if stadium {
					var v venue
					v, err = a.createVenue(ctx, target, sess.admin, fmt.Sprintf("hammer %s platform stadium %d", sess.id, i), layout)
					id = v.ID
				} else {
					id, err = a.createSchedule(ctx, target, sess.admin, fmt.Sprintf("hammer %s platform hall %d", sess.id, i-stadiums), p.HallSeats)
				}
				return err
			})
			took := time.Since(t0)
			mu.Lock()
			switch {
			case err != nil:
				if first == nil {
					first = fmt.Errorf("platform schedule %d of %d: %w", i+1, total, err)
				}
				cancel()
			case stadium:
				have.Stadiums = append(have.Stadiums, id)
				setup.MadeStadiums++
				slowest = max(slowest, took)
			default:
				have.Halls = append(have.Halls, id)
				setup.MadeHalls++
			}
			mu.Unlock()
			done.Add(1)
		}
	})
	stopTicks()
	finish()
	setup.Made, setup.SlowestStadium = duration(time.Since(began)), duration(slowest)
	return have, first
}

// Making thousands of small halls outruns the service's limit on one
// user's requests, the admin's too: a request refused so is sent again
// after rateLimitedPause, up to rateLimitedTries times.
const (
	rateLimitedPause = time.Second
	rateLimitedTries = 30
)

// retryLimited calls fn until it is not refused 429, rateLimitedTries
// times at most; it returns fn's last error.
func retryLimited(ctx context.Context, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		var e *apiError
		if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || try == rateLimitedTries ||
			!sleepUntil(ctx, time.Now().Add(rateLimitedPause)) {
			return err
		}
	}
}

// putQueues opens a queue nobody joins on each of ids, idleAdmitRate a
// second, as on-sales's idle queues are (PUT: a queue left open by an
// earlier run is put again).
func putQueues(ctx context.Context, sess *session, ids []int64) error {
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	target := sess.cfg.Targets[0]
	each(min(idleSetupWorkers, len(ids)), func() {
		for i := int(next.Add(1) - 1); i < len(ids) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
			err := retryLimited(ctx, func() error { return sess.api.putQueue(ctx, target, sess.admin, ids[i], time.Now(), idleAdmitRate, 0) })
			if err != nil {
				mu.Lock()
				first = cmpErr(first, fmt.Errorf("queue of schedule %d: %w", ids[i], err))
				mu.Unlock()
			}
		}
	})
	return first
}
