package periodic

import (
	"testing"
	"time"
)

func TestNextTickIsTheNextMultipleOfEvery(t *testing.T) {
	base := time.Date(2026, 1, 19, 17, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		now   time.Time
		prev  time.Time
		every time.Duration
		want  time.Time
	}{
		{base.Add(10 * time.Second), time.Time{}, time.Minute, base.Add(time.Minute)},
		{base, time.Time{}, time.Minute, base.Add(time.Minute)}, // exactly on a tick: the next one
		{base.Add(450 * time.Millisecond), time.Time{}, 200 * time.Millisecond, base.Add(600 * time.Millisecond)},
		// A wall clock stepped back behind the previous tick must not tick
		// that period again.
		{base.Add(-time.Second), base.Add(time.Minute), time.Minute, base.Add(2 * time.Minute)},
	} {
		if got := nextTick(tc.now, tc.prev, tc.every); !got.Equal(tc.want) {
			t.Errorf("nextTick(%v, %v, %v) = %v, want %v", tc.now, tc.prev, tc.every, got, tc.want)
		}
	}
}
