package waitroom

import (
	"testing"
	"time"
)

// TestSweepSettingsForgetsIdleSchedules: what an instance read of a queue
// is kept while the schedule is asked about, and dropped a sweep after.
func TestSweepSettingsForgetsIdleSchedules(t *testing.T) {
	r := NewRoom(nil, NewAdmissions([]byte("k")), Config{})
	r.queues[1] = cachedQueued{on: true, read: time.Now().Add(-2 * settingsSweepEvery)}
	r.queues[2] = cachedQueued{on: false, read: time.Now()}
	r.sweepSettings()
	if _, kept := r.queues[1]; kept {
		t.Error("an idle schedule's settings were kept")
	}
	if _, kept := r.queues[2]; !kept {
		t.Error("a schedule asked about just now was dropped")
	}
}

// TestSettingsRanges: an opening is checked as stored (to the
// millisecond) against the years RFC 3339 names, the first instant of
// them included, and a TTL's seconds before they become a duration.
func TestSettingsRanges(t *testing.T) {
	valid := Settings{AdmitPerSecond: 1, AdmissionTTL: DefaultAdmissionTTL}
	for _, tc := range []struct {
		opensAt time.Time
		ok      bool
	}{
		{time.Time{}, true},
		{time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC), true},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{time.Date(0, 12, 31, 23, 59, 59, 999_999_999, time.UTC), false},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("", 60)), false},
	} {
		s := valid
		s.OpensAt = tc.opensAt
		if err := s.Validate(); (err == nil) != tc.ok {
			t.Errorf("opening %v: %v", tc.opensAt, err)
		}
	}
	for seconds, ok := range map[int]bool{59: false, 60: true, 3600: true, 3601: false, 600 + 1<<55: false, -1 << 63: false, 1<<63 - 1: false} {
		ttl, err := AdmissionTTLOf(seconds)
		if (err == nil) != ok || ok && ttl != time.Duration(seconds)*time.Second {
			t.Errorf("AdmissionTTLOf(%d) = %v, %v", seconds, ttl, err)
		}
	}
}

// TestEstimateBehindAFullMaxActive: a place within maxActive's free
// places waits on the rate; one past them on the admissions measured
// lately, and with none measured its wait is unknown, never the rate's.
func TestEstimateBehindAFullMaxActive(t *testing.T) {
	settings := Settings{AdmitPerSecond: 10, MaxActive: 3}
	for _, tc := range []struct {
		position int
		active   int64
		observed float64
		want     time.Duration
		known    bool
	}{
		{1, 2, 0, 100 * time.Millisecond, true},
		{2, 2, 0, 0, false},
		{5, 3, 0, 0, false},
		{5, 3, 0.5, 10 * time.Second, true},
		{5, 3, 50, 500 * time.Millisecond, true},
	} {
		wait, known := estimate(tc.position, Snapshot{Settings: settings, Active: tc.active, ObservedRate: tc.observed})
		if wait != tc.want || known != tc.known {
			t.Errorf("position %d, %d active, %v measured: %v %v, want %v %v", tc.position, tc.active, tc.observed, wait, known, tc.want, tc.known)
		}
	}
	if wait, known := estimate(40, Snapshot{Settings: Settings{AdmitPerSecond: 10}}); wait != 4*time.Second || !known {
		t.Errorf("without a cap: %v %v", wait, known)
	}
}
