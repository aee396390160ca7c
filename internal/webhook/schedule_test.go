package webhook_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/webhook"
)

func TestDefaultSchedule(t *testing.T) {
	cfg := webhook.DefaultConfig()
	want := webhook.Schedule{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if !slices.Equal(cfg.Schedule, want) || cfg.Schedule.Attempts() != 8 {
		t.Errorf("default schedule %v (%d attempts), want %v (8)", cfg.Schedule, cfg.Schedule.Attempts(), want)
	}
	if cfg.Timeout != 10*time.Second || cfg.AllowInsecure || cfg.AllowPrivate {
		t.Errorf("DefaultConfig() = %+v", cfg)
	}
	if back, err := webhook.ParseSchedule(cfg.Schedule.String()); err != nil || !slices.Equal(back, want) {
		t.Errorf("ParseSchedule(%q) = %v, %v", cfg.Schedule.String(), back, err)
	}
}

func TestParseSchedule(t *testing.T) {
	got, err := webhook.ParseSchedule(" 1.5s , 250ms,1h30m")
	if want := (webhook.Schedule{1500 * time.Millisecond, 250 * time.Millisecond, 90 * time.Minute}); err != nil || !slices.Equal(got, want) {
		t.Errorf("ParseSchedule = %v, %v; want %v", got, err, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"", "retry schedule is empty"},
		{"  ", "retry schedule is empty"},
		{"5s,,5m", "delay 2 is empty"},
		{"5s,", "delay 2 is empty"},
		{",5s", "delay 1 is empty"},
		{"5s,five minutes", `delay 2, "five minutes", is not a duration`},
		{"5", `delay 1, "5", is not a duration`},
		{"5s,0s", `delay 2, "0s", must be above zero`},
		{"-1s", `delay 1, "-1s", must be above zero`},
	} {
		s, err := webhook.ParseSchedule(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want an error mentioning %q", tc.text, s, err, tc.want)
		}
	}
}

// The first attempt is immediate; the i-th delay comes before attempt
// i+2; after the last delay's attempt the delivery has failed.
func TestScheduleNext(t *testing.T) {
	s := webhook.Schedule{time.Second, time.Minute, time.Hour}
	exact := func() float64 { return 0.5 } // no jitter
	if d, ok := s.Next(0, exact); !ok || d != 0 {
		t.Errorf("Next(0) = %v, %v; want 0, true: the first attempt is immediate", d, ok)
	}
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: time.Minute, 3: time.Hour} {
		if d, ok := s.Next(attempts, exact); !ok || d != want {
			t.Errorf("Next(%d) = %v, %v; want %v, true", attempts, d, ok, want)
		}
	}
	for _, attempts := range []int{4, 5, 100} {
		if d, ok := s.Next(attempts, exact); ok {
			t.Errorf("Next(%d) = %v, true; want false: the delivery has failed", attempts, d)
		}
	}
	if _, ok := (webhook.Schedule{}).Next(1, nil); ok {
		t.Error("an empty schedule retried")
	}
}

func TestScheduleJitterWithinTenPercent(t *testing.T) {
	s := webhook.Schedule{10 * time.Second, 10 * time.Hour}
	for _, tc := range []struct {
		r    float64
		want time.Duration
	}{
		{0, 9 * time.Hour},
		{0.25, 9*time.Hour + 30*time.Minute},
		{0.5, 10 * time.Hour},
		{math.Nextafter(1, 0), 11 * time.Hour},
	} {
		d, _ := s.Next(2, func() float64 { return tc.r })
		if diff := d - tc.want; diff < -time.Millisecond || diff > time.Millisecond {
			t.Errorf("r=%v: %v, want %v", tc.r, d, tc.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[time.Duration]bool{}
	for range 1000 {
		d, ok := s.Next(1, rng.Float64)
		if !ok || d < 9*time.Second || d >= 11*time.Second {
			t.Fatalf("Next(1) = %v, %v; want [9s, 11s)", d, ok)
		}
		seen[d] = true
	}
	for range 1000 { // the default source, shared and safe for concurrent use
		if d, _ := s.Next(1, nil); d < 9*time.Second || d >= 11*time.Second {
			t.Fatalf("Next(1, nil) = %v; want [9s, 11s)", d)
		}
	}
	if len(seen) < 900 {
		t.Errorf("%d distinct delays in 1000: no jitter", len(seen))
	}
}
