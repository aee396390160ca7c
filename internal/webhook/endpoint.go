package webhook

import (
	"errors"
	"time"

	"github.com/google/uuid"
)

var (
	// ErrEndpointNotFound reports an endpoint id that names no endpoint.
	ErrEndpointNotFound = errors.New("webhook: endpoint not found")
	// ErrDeliveryNotFound reports an event that the endpoint has no
	// delivery of.
	ErrDeliveryNotFound = errors.New("webhook: delivery not found")
)

// SecretGrace is how long a secret stays valid after a rotation replaced
// it: every message carries both signatures meanwhile, so that a receiver
// can switch to the new secret at its own pace.
const SecretGrace = 24 * time.Hour

// MaxDescriptionLen is the longest description of an endpoint, in
// characters.
const MaxDescriptionLen = 500

// ReasonGone is the DisabledReason of an endpoint that answered 410 Gone.
const ReasonGone = "gone"

// Endpoint is a registered receiver of events.
type Endpoint struct {
	ID  uuid.UUID
	URL string
	// Events are the event types it receives (EventTypes when it named
	// none).
	Events      []string
	Description string
	Enabled     bool
	// DisabledReason says why the service disabled it (ReasonGone); ""
	// while enabled, or disabled by an admin.
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Secrets sign its messages: the current secret, then the previous
	// one while it is valid. Filled only where the secrets are needed to
	// send (for the worker), never for the API.
	Secrets []Secret
}

// EndpointChange is a change of an endpoint; a nil member stays as it is.
// Enabling an endpoint clears its DisabledReason.
type EndpointChange struct {
	URL         *string
	Events      []string
	Description *string
	Enabled     *bool
}

// The statuses of a delivery.
const (
	StatusPending   = "pending"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Delivery is the record of one event's delivery to one endpoint.
type Delivery struct {
	// Seq orders the endpoint's deliveries (the event's sequence).
	Seq     int64
	EventID string
	Type    string
	// Status is StatusPending, StatusSucceeded or StatusFailed.
	Status   string
	Attempts int
	// The last attempt's time, HTTP status (0: none) and error ("":
	// none), and when the next one is due (zero: none is).
	LastAttemptAt  time.Time
	LastStatusCode int
	LastError      string
	NextAttemptAt  time.Time
	CreatedAt      time.Time
}
