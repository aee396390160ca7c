package redisconn

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// ErrTooFewReplicas reports a write that fewer replicas than wanted had
// when its WAIT ended.
var ErrTooFewReplicas = errors.New("redisconn: too few replicas have the write")

// Replicas judges writes that must reach replicas before they are
// acknowledged (a WAIT after them on their connection). Redis replicates
// asynchronously, and a master that acknowledged a write it had not passed
// on loses it when a replica is promoted in its place (a crash, or a
// Sentinel failover: the old master takes writes until it is told it is a
// replica). Writes that miss their replicas are refused for Grace at most:
// then, with no replica to wait for, the master's word is taken (logged
// once), and a replica's return is noticed at the next write.
type Replicas struct {
	want    int
	timeout time.Duration
	grace   time.Duration
	what    string
	log     *slog.Logger
	// replicated is when a write last had its replicas (UnixNano).
	replicated   atomic.Int64
	unreplicated atomic.Bool
}

// NewReplicas returns the judge of writes that want replicas, each WAIT
// bounded by timeout; what names the writes in the log ("seat feed:
// appends").
func NewReplicas(want int, timeout, grace time.Duration, what string, log *slog.Logger) *Replicas {
	r := &Replicas{want: want, timeout: timeout, grace: grace, what: what, log: log}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.replicated.Store(time.Now().UnixNano())
	return r
}

// Want is how many replicas a write waits for.
func (r *Replicas) Want() int { return r.want }

// ReplicaWait is one write's wait for its replicas.
type ReplicaWait struct {
	r *Replicas
	// Timeout is the WAIT's: the whole timeout within the grace, past it a
	// look (1 ms), not a wait.
	Timeout   time.Duration
	graceOver bool
}

// Begin starts judging one write.
func (r *Replicas) Begin() ReplicaWait {
	w := ReplicaWait{r: r, Timeout: r.timeout}
	if time.Since(time.Unix(0, r.replicated.Load())) > r.grace {
		w.graceOver, w.Timeout = true, time.Millisecond
	}
	return w
}

// Judge takes the WAIT's answer, acked replicas: nil when enough had the
// write, or when the grace is over; ErrTooFewReplicas otherwise.
func (w ReplicaWait) Judge(acked int) error {
	r := w.r
	switch {
	case acked >= r.want:
		r.replicated.Store(time.Now().UnixNano())
		if r.unreplicated.Swap(false) {
			r.log.Info(r.what+" have their replicas again", "replicas", acked)
		}
	case !w.graceOver:
		return fmt.Errorf("%w: %d of %d after %s", ErrTooFewReplicas, acked, r.want, w.Timeout)
	case !r.unreplicated.Swap(true):
		r.log.Warn(r.what+" go on without their replicas: a failover now could lose them",
			"replicas", acked, "want", r.want, "waited", r.grace)
	}
	return nil
}
