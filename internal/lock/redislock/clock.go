package redislock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seatlock/seatlock/internal/lock/backend"
)

// An acquire that Redis runs after its caller gave up (queued while the
// server stalled: a long fork, SIGSTOP, a paused VM) must take nothing, or
// the key stays held by a token nobody will use for up to its TTL after
// Redis resumed. So every acquire carries its caller's deadline converted
// to the server's clock (TIME), and the scripts refuse past it
// (deadline.lua). The conversion needs the offset between the two clocks;
// clock measures it with one TIME round trip, first when an acquire with a
// deadline needs it, then again in the background every clockRefresh.
//
// A measurement bounds the offset to within half its round trip: Redis read
// its clock somewhere between the send and the reply. The deadline sent is
// the caller's give-up time plus the midpoint offset plus that half, plus
// drift since the measurement (clockDrift) and clockSlack, so that Redis's
// clock at the caller's give-up is never past it: an acquire that runs
// while its caller still waits is never refused for a clock error, and one
// that runs after the give-up is refused unless it ran within the margin.

// Tuning of the clock offset.
const (
	// clockRefresh is how old a measurement gets before a new one is
	// taken in the background (the old one serves meanwhile).
	clockRefresh = 30 * time.Second
	// clockRefreshTimeout bounds a background measurement.
	clockRefreshTimeout = time.Second
	// clockDrift is the assumed rate at which the two clocks drift apart
	// (quartz is good to 50 ppm; NTP slews at up to 500 ppm), added to
	// the margin per second since the measurement.
	clockDrift = 500e-6
	// clockSlack covers the microsecond rounding of both clocks.
	clockSlack = time.Millisecond
)

var timeScript = redis.NewScript("return redis.call('TIME')")

// offsetSample is one measurement: Redis's clock minus ours at the
// midpoint of the round trip, its half round trip, and when it was taken.
type offsetSample struct {
	offset, halfRTT time.Duration
	at              time.Time
}

// uncertainty is how far the true offset can be from sample.offset at now.
func (s offsetSample) uncertainty(now time.Time) time.Duration {
	age := max(now.Sub(s.at), 0)
	return s.halfRTT + time.Duration(float64(age)*clockDrift) + clockSlack
}

// clock is a Backend's estimate of the server's clock.
type clock struct {
	client Client

	mu         sync.Mutex
	sample     offsetSample
	known      bool
	tried      time.Time // when the last measurement was taken
	refreshing bool
	refreshes  sync.WaitGroup
	stop       context.Context
	cancel     context.CancelFunc
}

func newClock(client Client) *clock {
	c := &clock{client: client}
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

// close stops and waits for a background measurement.
func (c *clock) close() {
	c.mu.Lock()
	c.cancel()
	c.mu.Unlock()
	c.refreshes.Wait()
}

// measure takes one sample with a TIME round trip.
func (c *clock) measure(ctx context.Context) (offsetSample, error) {
	sent := time.Now()
	reply, err := timeScript.Run(ctx, c.client, nil).StringSlice()
	received := time.Now()
	if err != nil {
		return offsetSample{}, err
	}
	if len(reply) != 2 {
		return offsetSample{}, fmt.Errorf("redislock: TIME: unexpected reply %v", reply)
	}
	var sec, usec int64
	if _, err := fmt.Sscan(reply[0], &sec); err != nil {
		return offsetSample{}, fmt.Errorf("redislock: TIME: %w", err)
	}
	if _, err := fmt.Sscan(reply[1], &usec); err != nil {
		return offsetSample{}, fmt.Errorf("redislock: TIME: %w", err)
	}
	rtt := received.Sub(sent)
	mid := sent.Add(rtt / 2)
	server := time.UnixMicro(sec*1_000_000 + usec)
	return offsetSample{offset: server.Sub(mid), halfRTT: rtt / 2, at: received}, nil
}

// keep adopts s unless the sample held, widened by its age, is still the
// more certain one (a measurement during a slow spell has a wide round
// trip).
func (c *clock) keep(s offsetSample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tried = s.at
	if !c.known || s.uncertainty(s.at) <= c.sample.uncertainty(s.at) {
		c.sample, c.known = s, true
	}
}

// current returns the sample to use, measuring first under ctx when there
// is none, and starting a background measurement when it is old.
func (c *clock) current(ctx context.Context) (offsetSample, error) {
	c.mu.Lock()
	s, known := c.sample, c.known
	if known && time.Since(c.tried) > clockRefresh && !c.refreshing && c.stop.Err() == nil {
		c.refreshing = true
		c.refreshes.Add(1)
		go c.refresh()
	}
	c.mu.Unlock()
	if known {
		return s, nil
	}
	s, err := c.measure(ctx)
	if err != nil {
		return offsetSample{}, err
	}
	c.keep(s)
	return s, nil
}

func (c *clock) refresh() {
	defer c.refreshes.Done()
	ctx, cancel := context.WithTimeout(c.stop, clockRefreshTimeout)
	defer cancel()
	s, err := c.measure(ctx)
	if err == nil {
		c.keep(s)
	}
	c.mu.Lock()
	c.refreshing = false
	if err != nil {
		c.tried = time.Now() // try again after another clockRefresh
	}
	c.mu.Unlock()
}

// serverDeadline converts giveUp, on the local clock, to the server's clock
// in microseconds, late by the sample's uncertainty at giveUp: the server's
// clock at giveUp is not past it. by is the latest local instant at which
// the server's clock can still be before that deadline: an acquire sent
// with it takes effect by then or never.
func serverDeadline(s offsetSample, giveUp time.Time) (micros int64, by time.Time) {
	u := s.uncertainty(giveUp)
	return giveUp.Add(s.offset + u).UnixMicro(), giveUp.Add(2 * u)
}

// deadline is the deadline argument of an acquire under ctx: 0 (none) when
// ctx has no deadline; else the server-clock deadline, and by, the latest
// local instant the acquire can take effect. It fails, with nothing sent
// but a TIME call, when the offset is unknown and cannot be measured within
// ctx.
func (c *clock) deadline(ctx context.Context) (micros int64, by time.Time, err error) {
	giveUp, ok := ctx.Deadline()
	if !ok {
		return 0, time.Time{}, nil
	}
	s, err := c.current(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	micros, by = serverDeadline(s, giveUp)
	return micros, by, nil
}

// errPastDeadline is an acquire that Redis ran after its caller's deadline
// (in the server's clock) and that took nothing.
var errPastDeadline = backend.ErrPastDeadline
