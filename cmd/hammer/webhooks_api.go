package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The event types the service sends, all of which the receivers ask for.
const (
	eventReservationCreated   = "reservation.created"
	eventReservationCancelled = "reservation.cancelled"
	eventHoldCreated          = "hold.created"
	eventHoldConfirmed        = "hold.confirmed"
	eventHoldReleased         = "hold.released"
	eventHoldExpired          = "hold.expired"
)

var webhookEventTypes = []string{eventReservationCreated, eventReservationCancelled,
	eventHoldCreated, eventHoldConfirmed, eventHoldReleased, eventHoldExpired}

// webhookIn is POST /webhooks's body.
type webhookIn struct {
	URL         string   `json:"url"`
	Events      []string `json:"events,omitempty"`
	Description string   `json:"description,omitempty"`
}

// webhookOut is a registration as the service answers it.
type webhookOut struct {
	ID      jsonID   `json:"id"`
	URL     string   `json:"url"`
	Events  []string `json:"events"`
	Enabled bool     `json:"enabled"`
	Secret  string   `json:"secret"`
}

// createWebhook registers an endpoint for every event type (admin) and
// checks the answer: enabled, for that URL, with a secret.
func (a *api) createWebhook(ctx context.Context, target, adminToken, endpoint, description string) (webhookOut, error) {
	var out webhookOut
	in := webhookIn{URL: endpoint, Events: webhookEventTypes, Description: description}
	if err := a.call(ctx, "create webhook", http.MethodPost, target+"/webhooks", adminToken, in, &out, http.StatusCreated); err != nil {
		return out, err
	}
	switch {
	case out.ID == "" || out.URL != endpoint || !out.Enabled:
		return out, fmt.Errorf("create webhook: answer has id %q, url %q, enabled %v; want an id, %q, true", out.ID, out.URL, out.Enabled, endpoint)
	case !strings.HasPrefix(out.Secret, webhookSecretPrefix):
		return out, fmt.Errorf("create webhook: secret does not start %s", webhookSecretPrefix)
	case len(out.Events) > 0 && !containsAll(out.Events, webhookEventTypes):
		return out, fmt.Errorf("create webhook: answer's events %q lack some of %q", out.Events, webhookEventTypes)
	}
	return out, nil
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// deleteWebhook removes a registration (admin): 204.
func (a *api) deleteWebhook(ctx context.Context, target, adminToken string, id jsonID) error {
	return a.call(ctx, "delete webhook", http.MethodDelete, target+"/webhooks/"+url.PathEscape(string(id)), adminToken, nil, nil, http.StatusNoContent)
}

// maxWebhooksRead is the page of registrations otherWebhooks counts.
const maxWebhooksRead = 100

// enabledWebhooks counts the enabled registrations on the service
// (admin) from the first page, at most maxWebhooksRead; more says there
// were more pages.
func (a *api) enabledWebhooks(ctx context.Context, target, adminToken string) (n int, more bool, err error) {
	var out struct {
		Webhooks []struct {
			Enabled bool `json:"enabled"`
		} `json:"webhooks"`
		Next *string `json:"next"`
	}
	u := target + "/webhooks?limit=" + strconv.Itoa(maxWebhooksRead)
	if err := a.call(ctx, "list webhooks", http.MethodGet, u, adminToken, nil, &out, http.StatusOK); err != nil {
		return 0, false, err
	}
	for _, w := range out.Webhooks {
		if w.Enabled {
			n++
		}
	}
	return n, out.Next != nil && *out.Next != "", nil
}

// maxDeliveriesRead is the page of deliveries the report counts: enough
// to say "none" or "many", not a census.
const maxDeliveriesRead = 100

// webhookDeliveries counts a registration's deliveries of a status
// (pending, succeeded, failed) from the first page, at most
// maxDeliveriesRead; more says there were more pages.
func (a *api) webhookDeliveries(ctx context.Context, target, adminToken string, id jsonID, status string) (n int, more bool, err error) {
	var out struct {
		Deliveries []struct {
			EventID string `json:"eventId"`
		} `json:"deliveries"`
		Next string `json:"next"`
	}
	u := target + "/webhooks/" + url.PathEscape(string(id)) + "/deliveries?status=" + status + "&limit=" + strconv.Itoa(maxDeliveriesRead)
	if err := a.call(ctx, "get webhook deliveries", http.MethodGet, u, adminToken, nil, &out, http.StatusOK); err != nil {
		return 0, false, err
	}
	return len(out.Deliveries), out.Next != "", nil
}
