package redislock

import (
	"context"
	"time"
)

// PendingCalls is how many calls of b wait for a batch.
func PendingCalls(b *Backend) int { return b.pipeline.Pending() }

// OffsetSample is a measurement of the server's clock for tests of the
// deadline conversion: Redis's clock minus ours, half the round trip that
// measured it, and when.
type OffsetSample = offsetSample

// NewOffsetSample makes one.
func NewOffsetSample(offset, halfRTT time.Duration, at time.Time) OffsetSample {
	return offsetSample{offset: offset, halfRTT: halfRTT, at: at}
}

// ServerDeadline is serverDeadline.
var ServerDeadline = serverDeadline

// ClockDeadline is the deadline argument b would send for an acquire under
// ctx (0: none), and the latest local instant it can take effect.
func ClockDeadline(ctx context.Context, b *Backend) (int64, time.Time, error) {
	return b.clock.deadline(ctx)
}

// Tuning of the conversion.
const (
	ClockDrift = clockDrift
	ClockSlack = clockSlack
)
