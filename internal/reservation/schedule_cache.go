package reservation

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultScheduleCacheSize is how many schedules a Service keeps in memory
// when Config leaves it zero: a few hundred bytes each.
const DefaultScheduleCacheSize = 10_000

// scheduleCache keeps the schedules that were found. A schedule never
// changes once created (its seat count least of all), so a cached one is
// as good as the stored one and a booking needs no query to learn that its
// seat exists. A schedule that was not found is not cached: another
// instance may create it a moment later.
type scheduleCache struct {
	repo Repository
	lru  *lru.Cache[int64, Schedule]
}

func newScheduleCache(repo Repository, size int) *scheduleCache {
	c, err := lru.New[int64, Schedule](size)
	if err != nil {
		// Only a size below 1 fails, and NewService never passes one.
		panic(err)
	}
	return &scheduleCache{repo: repo, lru: c}
}

// schedule returns the schedule from memory, or from the Repository (and
// remembers it). Errors are the Repository's.
func (c *scheduleCache) schedule(ctx context.Context, id int64) (Schedule, error) {
	if s, ok := c.lru.Get(id); ok {
		return s, nil
	}
	s, err := c.repo.Schedule(ctx, id)
	if err != nil {
		return Schedule{}, err
	}
	c.lru.Add(id, s)
	return s, nil
}
