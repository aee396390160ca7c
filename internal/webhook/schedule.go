package webhook

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// jitter is the spread of a retry's delay around the schedule's, ±10%, so
// that deliveries that failed together do not all come back together.
const jitter = 0.10

// Schedule is the wait before each retry of a delivery: the first attempt
// is immediate, and the i-th delay (from 0) comes before attempt i+2.
// After the last delay's attempt fails, the delivery has failed.
type Schedule []time.Duration

// ParseSchedule reads a comma-separated list of Go durations
// ("5s,5m,30m"), each above zero; spaces around them are ignored. Its
// errors name the item at fault by position.
func ParseSchedule(text string) (Schedule, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("webhook: retry schedule is empty")
	}
	items := strings.Split(text, ",")
	s := make(Schedule, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		d, err := time.ParseDuration(item)
		switch {
		case item == "":
			return nil, fmt.Errorf("webhook: retry schedule: delay %d is empty", i+1)
		case err != nil:
			return nil, fmt.Errorf("webhook: retry schedule: delay %d, %q, is not a duration such as 30s or 2h", i+1, item)
		case d <= 0:
			return nil, fmt.Errorf("webhook: retry schedule: delay %d, %q, must be above zero", i+1, item)
		}
		s = append(s, d)
	}
	return s, nil
}

// Attempts is how many attempts a delivery gets: the first and one after
// each delay.
func (s Schedule) Attempts() int { return len(s) + 1 }

// Next returns the wait before the attempt after the attempts-th (counted
// from 1), the schedule's delay within ±10%, and true; or false when that
// was the last attempt and the delivery has failed. Before any attempt
// (0) the wait is 0: the first is immediate. rnd returns a number in
// [0, 1) (rand.Float64 when nil; tests pass their own).
func (s Schedule) Next(attempts int, rnd func() float64) (time.Duration, bool) {
	switch {
	case attempts < 1:
		return 0, true
	case attempts > len(s):
		return 0, false
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	base := s[attempts-1]
	return time.Duration(float64(base) * (1 - jitter + 2*jitter*rnd())), true
}

// String writes the schedule as ParseSchedule reads it.
func (s Schedule) String() string {
	items := make([]string, len(s))
	for i, d := range s {
		items[i] = d.String()
	}
	return strings.Join(items, ",")
}
