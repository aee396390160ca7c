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
