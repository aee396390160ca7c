// Package waitroom is the waiting room of an on-sale: the buyers of a
// schedule with a queue join a line, are admitted in its order at the rate
// the sale can serve, and only admitted buyers may hold or book its seats.
//
// Those who join before the queue opens (the pre-queue) are put in random
// order: each gets a key from a cryptographic source when joining, and the
// line orders them by it ahead of everyone who joins later, in arrival
// order. Nobody sees a position before the opening, so this is the same as
// shuffling the pre-queue at the opening, with nothing left to do then.
//
// The line lives in a Store every instance shares (Redis: package
// redisroom). Admission is paced by the store's clock: every instance asks
// the store ten times a second to admit what is due, and the store admits
// the count the time since the last admission pays for, so the rate is
// the same however many instances ask. Only the queues with something due
// are run (a queue with nobody in line costs nothing), each by one
// instance at a time under a claim shorter than the second's worth a queue
// may catch up, so an instance's death costs a pause and no admission. An
// admission is a signed token (Admissions) naming the
// ticket, its user and when it expires; the gate checks the signature and
// that the ticket is still admitted (it may have left).
package waitroom

import (
	"errors"
	"fmt"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Limits of the settings.
const (
	MaxAdmitPerSecond   = 10_000
	MaxActiveLimit      = 1_000_000
	MinAdmissionTTL     = 60 * time.Second
	MaxAdmissionTTL     = 3600 * time.Second
	DefaultAdmissionTTL = 600 * time.Second
)

// Settings are a schedule's queue.
type Settings struct {
	// OpensAt is when admission starts: who joins before is in the
	// pre-queue, shuffled.
	OpensAt time.Time
	// AdmitPerSecond is the rate of admission over all instances.
	AdmitPerSecond int
	// MaxActive caps the buyers admitted and not expired at once; 0: no
	// cap.
	MaxActive int
	// AdmissionTTL is how long an admission lasts.
	AdmissionTTL time.Duration
}

// Validate names every setting out of its range. The opening is checked
// as it is stored (StoredOpening), like a schedule's start: an instant
// RFC 3339 cannot name would be stored and then fail every read.
func (s Settings) Validate() error {
	var errs []error
	if err := reservation.CheckReadableTime("opensAt", StoredOpening(s.OpensAt)); err != nil {
		errs = append(errs, err)
	}
	if s.AdmitPerSecond < 1 || s.AdmitPerSecond > MaxAdmitPerSecond {
		errs = append(errs, &reservation.InvalidError{Field: "admitPerSecond", Detail: fmt.Sprintf("must be from 1 to %d", MaxAdmitPerSecond)})
	}
	if s.MaxActive < 0 || s.MaxActive > MaxActiveLimit {
		errs = append(errs, &reservation.InvalidError{Field: "maxActive", Detail: fmt.Sprintf("must be from 1 to %d", MaxActiveLimit)})
	}
	if s.AdmissionTTL < MinAdmissionTTL || s.AdmissionTTL > MaxAdmissionTTL || s.AdmissionTTL%time.Second != 0 {
		errs = append(errs, errAdmissionTTLRange)
	}
	return errors.Join(errs...)
}

var errAdmissionTTLRange = &reservation.InvalidError{Field: "admissionTtlSeconds",
	Detail: fmt.Sprintf("must be whole seconds from %d to %d", int(MinAdmissionTTL.Seconds()), int(MaxAdmissionTTL.Seconds()))}

// AdmissionTTLOf is an admission's TTL of seconds, checked before it is
// multiplied: a count far out of range could otherwise wrap into it.
func AdmissionTTLOf(seconds int) (time.Duration, error) {
	if seconds < int(MinAdmissionTTL/time.Second) || seconds > int(MaxAdmissionTTL/time.Second) {
		return 0, errAdmissionTTLRange
	}
	return time.Duration(seconds) * time.Second, nil
}

// StoredOpening is an opening as the store keeps it: to the millisecond.
func StoredOpening(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// State is where a ticket stands.
type State string

// The states of a ticket.
const (
	// Prequeue: joined before the opening; no position yet.
	Prequeue State = "prequeue"
	// Waiting: in line, at Position.
	Waiting State = "waiting"
	// Admitted: may hold and book until the admission expires.
	Admitted State = "admitted"
	// Expired: was admitted; the admission ran out.
	Expired State = "expired"
	// Left: left the line, or gave up an admission.
	Left State = "left"
)

// Final reports whether a ticket in state s can change no more.
func (s State) Final() bool { return s == Expired || s == Left }

// Ticket is a buyer's place in a schedule's queue.
type Ticket struct {
	ID         string
	ScheduleID int64
	UserID     string
	State      State
	// Position is 1 for the next to be admitted; set while Waiting.
	Position int
	// EstimatedWait is how long until admission, from the position and
	// the rate; set while Waiting, unless EstimatedWaitUnknown.
	EstimatedWait time.Duration
	// EstimatedWaitUnknown: the place is past maxActive's free ones, so
	// it waits on admitted buyers leaving or expiring, and none was
	// admitted lately to say how fast they do.
	EstimatedWaitUnknown bool
	// OpensAt is the queue's opening.
	OpensAt time.Time
	// AdmissionExpiresAt is set once admitted (and kept when expired).
	AdmissionExpiresAt time.Time
	// Admission is the token that admits; set while Admitted.
	Admission string
}

// Counts are a queue's tickets by state.
type Counts struct {
	Prequeue int64
	Waiting  int64
	// Active are admitted and not expired.
	Active int64
	// Admitted is every admission so far.
	Admitted int64
}

// Errors of the waiting room.
var (
	// ErrQueueNotFound: the schedule has no queue.
	ErrQueueNotFound = errors.New("waitroom: the schedule has no queue")
	// ErrTicketNotFound: no ticket of the caller has this id.
	ErrTicketNotFound = errors.New("waitroom: ticket not found")
	// ErrAdmissionRequired: the schedule's queue is on and the request
	// carried no admission.
	ErrAdmissionRequired = errors.New("waitroom: admission required")
	// ErrAdmissionInvalid: the admission is expired, given up, forged, of
	// another user or of another schedule.
	ErrAdmissionInvalid = errors.New("waitroom: admission invalid")
	// ErrQueueOpened: the opening of a queue that has opened cannot move.
	ErrQueueOpened = &reservation.InvalidError{Field: "opensAt", Detail: "cannot change: the queue has opened"}
	// ErrNoStore: the service runs without the store the queue needs
	// (Redis).
	ErrNoStore = errors.New("waitroom: no queue store (REDIS_URL)")
)
