package waitroom

import (
	"context"
	"time"
)

// Store keeps the queues where every instance sees them (package
// redisroom). Its clock decides the states and the pace, so that instances
// whose clocks differ agree. A failure to reach it wraps
// reservation.ErrUnavailable.
type Store interface {
	// Put creates or changes a schedule's queue; ErrQueueOpened when it
	// has opened and s would move its opening.
	Put(ctx context.Context, scheduleID int64, s Settings) error
	// Delete removes a schedule's queue and every ticket of it;
	// ErrQueueNotFound when there is none.
	Delete(ctx context.Context, scheduleID int64) error
	// Queued reports whether the schedule has a queue.
	Queued(ctx context.Context, scheduleID int64) (bool, error)
	// Counts reads a queue's settings and counts; ErrQueueNotFound.
	Counts(ctx context.Context, scheduleID int64) (Snapshot, Counts, error)
	// Join puts userID in the line with ticket (and prequeueKey, its
	// place among those who join before the opening), unless it has a
	// ticket already: it returns the user's one ticket and its place, and
	// whether it is new. ErrQueueNotFound.
	Join(ctx context.Context, scheduleID int64, userID, ticket string, prequeueKey float64) (string, Snapshot, bool, error)
	// Places reads where tickets stand (a Place not Found for each
	// unknown one); ErrQueueNotFound.
	Places(ctx context.Context, scheduleID int64, tickets ...string) (Snapshot, error)
	// PlacesOf reads where the tickets of several schedules stand, in one
	// call (one per Redis node): a Snapshot of each schedule whose queue
	// is there, its places in the order of its tickets.
	PlacesOf(ctx context.Context, tickets map[int64][]string) (map[int64]Snapshot, error)
	// Leave takes userID's ticket out of the line, or gives up its
	// admission; ErrTicketNotFound when the user has no such ticket.
	Leave(ctx context.Context, scheduleID int64, ticket, userID string) (Snapshot, error)
	// Admitted reports whether ticket holds an admission right now.
	Admitted(ctx context.Context, scheduleID int64, ticket string) (bool, error)
	// AdmitDue runs a round of admission (see Round) in every queue that
	// has something due: admissions the rate pays for, admissions that
	// end, a pre-queue to count. A queue with nobody in line and no
	// admission running has nothing due until a join, a leave or a Put
	// marks it. The queues a round runs are its own while it does: rounds
	// of other instances at the same time skip them, and, unless marked,
	// a queue is not due again before every has passed, so that it runs
	// once in that time however many instances run rounds.
	AdmitDue(ctx context.Context, every time.Duration) (Rounds, error)
	// MarkWaiting marks due every queue with buyers in its line, so that
	// a mark lost (an instance killed between a join and its mark, a
	// failover that kept the join and lost its mark) is made good. It
	// reads each queue's line once: a cost of a few calls per thousand
	// queues.
	MarkWaiting(ctx context.Context) error
	// Changes calls changed with the schedule of every Put and Delete
	// (of any instance) until ctx ends.
	Changes(ctx context.Context, changed func(scheduleID int64))
}

// Snapshot is a queue as the store saw it at Now.
type Snapshot struct {
	Now      time.Time
	Settings Settings
	// ObservedRate is the admissions a second over the last ten seconds
	// of admission (0 before).
	ObservedRate float64
	// Active are the admissions that hold at Now, counted only when
	// MaxActive caps them.
	Active int64
	Places []Place
}

// Place is where a ticket stood.
type Place struct {
	Found    bool
	UserID   string
	State    State
	Position int
	// Expires is the admission's expiry once admitted.
	Expires time.Time
}

// Rounds is what a round of admission over the due queues did.
type Rounds struct {
	// Queues are the rounds of the queues that were due, by schedule.
	Queues map[int64]Round
	// InLine and Active are totals over every queue, as each queue's last
	// round counted them.
	InLine, Active int64
}

// Round is what one round of admission of a queue did.
type Round struct {
	// Admitted were admitted in this round, and Waits is each one's wait
	// since it joined (or since the opening, for the pre-queue).
	Admitted int
	Waits    []time.Duration
	// Open reports whether the queue had opened; InLine are waiting (or
	// in the pre-queue when not Open), Active admitted and not expired,
	// AdmittedTotal every admission so far.
	Open          bool
	InLine        int64
	Active        int64
	AdmittedTotal int64
}
