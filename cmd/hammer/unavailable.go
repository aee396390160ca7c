package main

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// unavailablePatience is how long the hammer keeps asking again a call
// that is not a booking when the service refuses it 503 (its database
// failing over: PostgreSQL promotes the standby in some 8 s): the
// schedules fresh-seats makes and the streams -watch opens as the run
// goes, the seat map read before it, and the seat maps and reservations
// read back after it, which may come right after a failover.
const unavailablePatience = 30 * time.Second

// unavailableRetryGap is the wait between two tries of a refused call.
const unavailableRetryGap = 250 * time.Millisecond

// patience retries calls refused 503 until none has succeeded for
// unavailablePatience: calls that share it (the reads of one verification)
// wait for the service together, and once it has come back each call has
// the whole time again.
type patience struct {
	mu       sync.Mutex
	progress time.Time // the last success, or when patience began
}

func newPatience() *patience { return &patience{progress: time.Now()} }

// do calls fn until it succeeds, fails otherwise than 503, ctx ends or
// unavailablePatience has passed since the last success; it returns fn's
// last error.
func (p *patience) do(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		p.mu.Lock()
		if err == nil {
			p.progress = time.Now()
		}
		expired := time.Since(p.progress) >= unavailablePatience
		p.mu.Unlock()
		if err == nil || !isUnavailable(err) || expired || !sleepUntil(ctx, time.Now().Add(unavailableRetryGap)) {
			return err
		}
	}
}

// isUnavailable reports whether err is the service's 503.
func isUnavailable(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == http.StatusServiceUnavailable
}
