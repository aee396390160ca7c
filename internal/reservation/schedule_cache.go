package reservation

import (
	"context"
	"strconv"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
)

// scheduleLookupTimeout bounds a schedule query shared by several requests.
const scheduleLookupTimeout = 5 * time.Second

// scheduleCacheSize is how many schedules a Service keeps in memory: a
// few hundred bytes each.
const scheduleCacheSize = 10_000

// scheduleCache keeps the schedules that were found, for every use case of
// a Service. A schedule never changes once created (its seat count least of
// all), so a cached one is as good as the stored one and a booking needs no
// query to learn that its seat exists. A schedule that was not found is not
// cached: another instance may create it a moment later.
//
// Concurrent misses of one schedule share one query (singleflight): the
// first requests for a new schedule arrive together, and without it each
// would queue for a connection to ask the same question.
type scheduleCache struct {
	repo    ScheduleStore
	lru     *lru.Cache[int64, Schedule]
	loading singleflight.Group
}

func newScheduleCache(repo ScheduleStore) *scheduleCache {
	c, err := lru.New[int64, Schedule](scheduleCacheSize)
	if err != nil {
		panic(err) // only a size below 1 fails
	}
	return &scheduleCache{repo: repo, lru: c}
}

// schedule returns the schedule from memory, or from the ScheduleStore (and
// remembers it). Errors are the ScheduleStore's.
func (c *scheduleCache) schedule(ctx context.Context, id int64) (Schedule, error) {
	if s, ok := c.lru.Get(id); ok {
		return s, nil
	}
	// The shared query must not end with the request that happened to
	// start it: it runs detached (keeping its values), bounded by its own
	// timeout, and each caller stops waiting when its own context ends.
	ch := c.loading.DoChan(strconv.FormatInt(id, 10), func() (any, error) {
		lookup, cancel := context.WithTimeout(context.WithoutCancel(ctx), scheduleLookupTimeout)
		defer cancel()
		s, err := c.repo.Schedule(lookup, id)
		if err == nil {
			c.lru.Add(id, s)
		}
		return s, err
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		select {
		case res = <-ch: // an answer that is there is still used
		default:
			return Schedule{}, ctx.Err()
		}
	}
	if res.Err != nil {
		return Schedule{}, res.Err
	}
	return res.Val.(Schedule), nil
}
