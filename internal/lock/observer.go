package lock

import "time"

// Outcome is how an Acquire ended, as reported to an Observer.
type Outcome string

// Outcomes of an Acquire.
const (
	OutcomeAcquired Outcome = "acquired"
	OutcomeHeld     Outcome = "held"
	OutcomeError    Outcome = "error"
	// OutcomeSealed is an Acquire refused because the key is sealed.
	OutcomeSealed Outcome = "sealed"
)

// Observer receives the figures operators need to tune Wait and TTL
// (see internal/lock/lockmetrics for the Prometheus one). Methods must be
// cheap and safe for concurrent use.
type Observer interface {
	// Acquired reports one Acquire call: its outcome and how long it
	// waited (zero for a fail-fast call that did not wait).
	Acquired(outcome Outcome, waited time.Duration)
	// Released reports the end of a lease and how long it was held;
	// gone is true when the lock had already expired or been taken.
	Released(held time.Duration, gone bool)
	// Extended reports one extension attempt (watchdog or Extend).
	Extended(ok bool)
	// Lost reports a lease found lost while held.
	Lost()
}

type nopObserver struct{}

func (nopObserver) Acquired(Outcome, time.Duration) {}
func (nopObserver) Released(time.Duration, bool)    {}
func (nopObserver) Extended(bool)                   {}
func (nopObserver) Lost()                           {}
