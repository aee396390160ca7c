package main

import (
	"fmt"
	"time"
)

// Defaults and bounds of -webhooks.
const (
	maxWebhookReceivers = 100
	// defaultWebhookDrain bounds the wait after the load for the last
	// messages: the service retries a failed delivery with backoff, and
	// an outage's backlog takes a while.
	defaultWebhookDrain = time.Minute
)

// webhookConfig is -webhooks: N local receivers registered for every
// event type; receiver 1 down for Outage (from OutageAfter into the load)
// when positive; Drain the most the hammer waits after the load for every
// committed change to arrive everywhere.
type webhookConfig struct {
	N           int           `json:"receivers"`
	Outage      time.Duration `json:"outageNs,omitempty"`
	OutageAfter time.Duration `json:"outageAfterNs,omitempty"` // not a flag: tests shorten it
	Drain       time.Duration `json:"drainNs"`
}

// webhooks defines -webhooks, -webhook-outage and -webhook-drain (the
// scenarios whose changes the hammer records: hot-seat, fresh-seats and
// contended their bookings, on-sale its holds and confirmations).
func (f *flags) webhooks() {
	w := &f.cfg.Webhooks
	w.OutageAfter = defaultOutageAfter
	f.IntVar(&w.N, "webhooks", 0, fmt.Sprintf("start this many local webhook receivers (1..%d), register each for every event type "+
		"and report what each got of the changes committed: lost (fails the verdict), duplicates, out of order, bad signatures, latency; "+
		"the service must allow http and private addresses (WEBHOOK_ALLOW_INSECURE/PRIVATE)", maxWebhookReceivers))
	f.DurationVar(&w.Outage, "webhook-outage", 0, fmt.Sprintf("take receiver 1 down this long from %s into the load: "+
		"connections refused the first half, 500 the second; report its backlog's drain time", defaultOutageAfter))
	f.DurationVar(&w.Drain, "webhook-drain", defaultWebhookDrain, "the most to wait after the load (and the outage) for every committed change to reach every receiver")
	f.check(func() error {
		switch {
		case w.N < 0 || w.N > maxWebhookReceivers:
			return usagef("-webhooks must be 0..%d", maxWebhookReceivers)
		case w.Outage < 0 || w.Outage > maxDuration:
			return usagef("-webhook-outage must be positive and at most %s", maxDuration)
		case w.Drain <= 0 || w.Drain > maxDuration:
			return usagef("-webhook-drain must be positive and at most %s", maxDuration)
		case w.N == 0 && (f.given["webhook-outage"] || f.given["webhook-drain"]):
			return usagef("-webhook-outage and -webhook-drain are for -webhooks N")
		}
		return nil
	})
}
