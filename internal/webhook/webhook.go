// Package webhook is the pure core of outgoing webhooks: the
// Standard Webhooks message format and signature (https://www.standardwebhooks.com),
// signing secrets and their encryption at rest, the retry schedule, the
// checks on an endpoint's URL (form and SSRF) and a Sender that makes one
// delivery attempt. It stores nothing and serves no route: the API and the
// delivery worker are built on it.
//
// It imports nothing else of the module.
package webhook

import "time"

// The headers of a delivery, as the specification spells them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Defaults of Config, also those of the WEBHOOK_* variables.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultSchedule = "5s,5m,30m,2h,5h,10h,10h"
	// DefaultRetention is how long the delivery log keeps a finished
	// delivery (WEBHOOK_RETENTION).
	DefaultRetention = 7 * 24 * time.Hour
)

// Config holds the settings of outgoing webhooks. Build it with
// DefaultConfig and change what differs; internal/config reads it from
// the WEBHOOK_* variables.
type Config struct {
	// Timeout bounds one attempt, from the dial to the last byte of the
	// answer read (WEBHOOK_TIMEOUT); 0 in a Config built by hand:
	// DefaultTimeout.
	Timeout time.Duration
	// Schedule is the wait before each retry (WEBHOOK_RETRY_SCHEDULE).
	Schedule Schedule
	// AllowInsecure accepts http:// endpoints, not only https://
	// (WEBHOOK_ALLOW_INSECURE), for development and tests.
	AllowInsecure bool
	// AllowPrivate lets deliveries reach loopback, private, link-local and
	// the other addresses refused as SSRF (WEBHOOK_ALLOW_PRIVATE), for
	// receivers inside the same network.
	AllowPrivate bool
}

// DefaultConfig returns the defaults: a 10 s timeout, the default
// schedule (7 retries over about 28 hours), https only, public addresses
// only.
func DefaultConfig() Config {
	schedule, err := ParseSchedule(DefaultSchedule)
	if err != nil {
		panic(err) // DefaultSchedule is a constant that parses
	}
	return Config{Timeout: DefaultTimeout, Schedule: schedule}
}
