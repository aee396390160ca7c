package redislock_test

import (
	"context"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/lock/lockenv"
	"github.com/seatlock/seatlock/internal/lock/redislock"
)

// The caller's give-up time goes to Redis's clock by the measured offset,
// late by half the measuring round trip, the drift since and the slack; by
// is the latest local instant Redis's clock can be before that deadline.
func TestServerDeadlineConversion(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	giveUp := at.Add(10 * time.Second)
	for _, tc := range []struct {
		name            string
		offset, halfRTT time.Duration
	}{
		{"same clock", 0, 0},
		{"Redis ahead", 3*time.Second + 250*time.Microsecond, 400 * time.Microsecond},
		{"Redis behind", -90 * time.Minute, 2 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redislock.NewOffsetSample(tc.offset, tc.halfRTT, at)
			micros, by := redislock.ServerDeadline(s, giveUp)
			margin := tc.halfRTT + time.Duration(float64(10*time.Second)*redislock.ClockDrift) + redislock.ClockSlack
			if want := giveUp.Add(tc.offset + margin).UnixMicro(); micros != want {
				t.Errorf("deadline = %d µs, want %d (give-up %v, offset %v, margin %v)", micros, want, giveUp, tc.offset, margin)
			}
			// Whatever the true offset within the measurement's bounds,
			// Redis's clock at the give-up is not past the deadline.
			for _, truth := range []time.Duration{tc.offset - tc.halfRTT, tc.offset, tc.offset + tc.halfRTT} {
				if redisAtGiveUp := giveUp.Add(truth).UnixMicro(); redisAtGiveUp > micros {
					t.Errorf("true offset %v: Redis's clock at the give-up (%d) is past the deadline %d", truth, redisAtGiveUp, micros)
				}
			}
			if want := giveUp.Add(2 * margin); !by.Equal(want) {
				t.Errorf("by = %v, want %v", by, want)
			}
		})
	}
}

// Without a context deadline an acquire carries none (0), as before
// deadlines existed; with one, it is the give-up time in Redis's clock
// (here the same machine's), late by the small margin.
func TestClockDeadlineFromContext(t *testing.T) {
	t.Parallel()
	b := newBackend(t, lockenv.Redis(t))
	micros, by, err := redislock.ClockDeadline(context.Background(), b)
	if err != nil || micros != 0 || !by.IsZero() {
		t.Fatalf("no context deadline: %d, %v, %v; want 0, zero time, nil", micros, by, err)
	}
	giveUp := time.Now().Add(2 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), giveUp)
	defer cancel()
	micros, by, err = redislock.ClockDeadline(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	// Redis runs on this machine: the offset is about zero, the margin a
	// few milliseconds at most (half a local round trip, the slack).
	if d := time.Duration(micros-giveUp.UnixMicro()) * time.Microsecond; d < 0 || d > 250*time.Millisecond {
		t.Errorf("deadline %v after the give-up, want within [0, 250ms]", d)
	}
	if d := by.Sub(giveUp); d <= 0 || d > 500*time.Millisecond {
		t.Errorf("by %v after the give-up, want within (0, 500ms]", d)
	}
}
