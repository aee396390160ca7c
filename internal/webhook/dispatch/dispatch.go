// Package dispatch delivers webhook events to their endpoints. A fan-out
// (one instance's at a time) takes the events the changes' transactions
// wrote and sends each at once to the endpoints subscribed to it, writing
// each delivery once with its outcome; what it cannot deliver at once
// (refused, slow, behind an earlier delivery of its object, for a failing
// endpoint) it writes pending for the endpoint's worker, which retries on
// the schedule, so that a slow or failing endpoint delays no other. Any
// number of instances may run a Dispatcher at once: the Store hands each
// pending delivery to one of them at a time, and never a delivery of an
// object while an earlier one of the same object to the same endpoint is
// pending (order per object).
package dispatch

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/webhook"
)

// Endpoints lists the enabled endpoints, each with its URL and opened
// secrets. An endpoint whose secrets cannot be opened is left out, and
// said in the error, with the others still listed.
type Endpoints interface {
	Active(ctx context.Context) ([]webhook.Endpoint, error)
}

// Due is a delivery handed to a worker: its event, and how many attempts
// it has had.
type Due struct {
	Seq        int64
	EventID    string
	Type       string
	ObjectID   uuid.UUID
	OccurredAt time.Time
	Data       json.RawMessage
	Attempts   int
}

// Delivery statuses, as the log keeps them.
const (
	Pending   = webhook.StatusPending
	Succeeded = webhook.StatusSucceeded
	Failed    = webhook.StatusFailed
)

// Attempt is the outcome of one attempt at a delivery: its new status,
// and while pending when it is next due.
type Attempt struct {
	Seq        int64
	Status     string
	At         time.Time
	StatusCode int // 0: no answer
	Error      string
	NextAt     time.Time
}

// Fresh is an event a fan-out takes: the enabled endpoints subscribed to
// its type, and of those the ones holding an earlier delivery of its
// object pending, behind which it waits.
type Fresh struct {
	Due
	Endpoints []uuid.UUID
	Held      []uuid.UUID
}

// Made is a delivery a fan-out writes: the outcome of the attempt the
// fan-out made, or (Attempted false) pending for the endpoint's worker,
// due at NextAt.
type Made struct {
	Endpoint  uuid.UUID
	Attempted bool
	Attempt
}

// Store keeps events and the delivery log.
type Store interface {
	// FanOut takes up to limit undispatched events from seq from on
	// (none while another fan-out runs), hands them to deliver, and
	// writes the deliveries it returns and marks the events dispatched in
	// one transaction. It returns how many events it took and the lowest
	// seq among them.
	FanOut(ctx context.Context, from int64, limit int, deliver func([]Fresh) []Made) (events int, lowest int64, err error)
	// ClaimDue leases up to limit of endpoint's due deliveries for
	// lease, oldest first, at most one of each object and none behind
	// an earlier pending delivery of its object.
	ClaimDue(ctx context.Context, endpoint uuid.UUID, limit int, lease time.Duration) ([]Due, error)
	// Record writes the outcomes of attempts at endpoint's deliveries.
	Record(ctx context.Context, endpoint uuid.UUID, attempts []Attempt) error
	// DueNow brings endpoint's pending deliveries forward to now, but
	// for those leased within the last leased.
	DueNow(ctx context.Context, endpoint uuid.UUID, leased time.Duration) (int64, error)
	// DisableWebhook turns endpoint off, saying why.
	DisableWebhook(ctx context.Context, endpoint uuid.UUID, reason string) error
}

// Sender makes one attempt (webhook.Sender).
type Sender interface {
	Send(ctx context.Context, a webhook.Attempt) webhook.Result
}

// Observer is told of every attempt, for the metrics: its outcome
// (Succeeded, Failed, or Pending for one to be retried) and, on success,
// the time from the event to its delivery.
type Observer interface {
	Attempted(outcome string, sinceEvent time.Duration)
}

// GoneReason is an endpoint's disabled_reason after it answered 410.
const GoneReason = webhook.ReasonGone

// Config tunes a Dispatcher; zero fields take the defaults below.
type Config struct {
	// Schedule is the wait before each retry (webhook.Schedule).
	Schedule webhook.Schedule
	// FanOutEvery is how often events are turned into deliveries when
	// the last look found none to spare; FanOutBatch how many a look
	// takes at most. FanOutWait is how long a fan-out waits for the
	// attempts it makes: one still under way then is left to finish on
	// its own, its delivery leased, and its endpoint's next events go
	// to its worker.
	FanOutEvery time.Duration
	FanOutBatch int
	FanOutWait  time.Duration
	// PollEvery is how often a worker looks for due deliveries when no
	// fan-out woke it (retries, and the deliveries other instances made).
	PollEvery time.Duration
	// Batch is how many deliveries a healthy endpoint's worker sends at
	// once; one whose last attempt failed gets one at a time, every
	// ProbeEvery, until one succeeds.
	Batch      int
	ProbeEvery time.Duration
	// Lease is how long a claimed delivery is kept from other workers:
	// longer than an attempt may take (webhook.Config.Timeout).
	Lease time.Duration
	// EndpointsEvery is how often the enabled endpoints are read again.
	EndpointsEvery time.Duration
}

// Defaults of Config.
const (
	DefaultFanOutEvery    = 50 * time.Millisecond
	DefaultFanOutBatch    = 1000
	DefaultFanOutWait     = 2 * time.Second
	DefaultPollEvery      = 250 * time.Millisecond
	DefaultBatch          = 256
	DefaultProbeEvery     = time.Second
	DefaultLease          = 30 * time.Second
	DefaultEndpointsEvery = time.Second
)

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.FanOutEvery, DefaultFanOutEvery)
	def(&c.FanOutWait, DefaultFanOutWait)
	def(&c.PollEvery, DefaultPollEvery)
	def(&c.ProbeEvery, DefaultProbeEvery)
	def(&c.Lease, DefaultLease)
	def(&c.EndpointsEvery, DefaultEndpointsEvery)
	if c.FanOutBatch <= 0 {
		c.FanOutBatch = DefaultFanOutBatch
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Schedule == nil {
		c.Schedule, _ = webhook.ParseSchedule(webhook.DefaultSchedule)
	}
	return c
}

// Dispatcher runs the fan-out and one worker per enabled endpoint.
type Dispatcher struct {
	cfg       Config
	store     Store
	endpoints Endpoints
	sender    Sender
	observer  Observer
	log       *slog.Logger
	// from is where the next fan-out starts looking: the lowest event it
	// took last, since every event before it was dispatched then. An
	// event whose transaction committed after a later one's (an earlier
	// seq, seen late) is found by a look from the start, every
	// fullLookEvery; lastFullLook is when the last one was.
	from         int64
	lastFullLook time.Time
	// rnd jitters the retries (nil: math/rand).
	rnd func() float64
	// late counts the attempts that outlasted their fan-out's wait and
	// are still to be recorded.
	late sync.WaitGroup
}

// New returns a Dispatcher; observer may be nil.
func New(cfg Config, store Store, endpoints Endpoints, sender Sender, observer Observer, log *slog.Logger) *Dispatcher {
	if observer == nil {
		observer = noObserver{}
	}
	return &Dispatcher{cfg: cfg.withDefaults(), store: store, endpoints: endpoints, sender: sender, observer: observer, log: log}
}

type noObserver struct{}

func (noObserver) Attempted(string, time.Duration) {}
