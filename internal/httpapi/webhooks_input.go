package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Pages of the webhook lists.
const (
	defaultWebhookPage  = 20
	maxWebhookPage      = 100
	defaultDeliveryPage = 50
	maxDeliveryPage     = 500
	// maxEventIDLen bounds an event id in a path: the service's are 36
	// characters ("msg_" and 32 hexadecimal digits).
	maxEventIDLen = 64
)

// checkEndpoint returns the domain's verdict on an endpoint's members,
// those sent (nil: left out): a URL of the right form (not yet its host,
// checkURLHost), known event types, each once, and at least one; a
// description of at most webhook.MaxDescriptionLen characters without
// control characters.
func (h *handler) checkEndpoint(rawURL *string, events []string, description *string) error {
	var errs []error
	if rawURL != nil {
		if _, err := webhook.ParseURL(*rawURL, h.webhookConfig.AllowInsecure); err != nil {
			errs = append(errs, &reservation.InvalidError{Field: "url", Detail: urlReason(err)})
		}
	}
	if events != nil && len(events) == 0 {
		errs = append(errs, &reservation.InvalidError{Field: "events",
			Detail: "must name at least one event type; leave it out for every type"})
	}
	for i, t := range events {
		switch {
		case !webhook.KnownEventType(t):
			errs = append(errs, &reservation.InvalidError{Field: fmt.Sprintf("events[%d]", i),
				Detail: "is not an event type; the types are " + strings.Join(webhook.EventTypes(), ", ")})
		case slices.Index(events, t) < i:
			errs = append(errs, &reservation.InvalidError{Field: fmt.Sprintf("events[%d]", i), Detail: "is listed twice"})
		}
	}
	if description != nil {
		switch {
		case utf8.RuneCountInString(*description) > webhook.MaxDescriptionLen:
			errs = append(errs, &reservation.InvalidError{Field: "description",
				Detail: fmt.Sprintf("must be at most %d characters", webhook.MaxDescriptionLen)})
		case strings.ContainsFunc(*description, unicode.IsControl):
			errs = append(errs, &reservation.InvalidError{Field: "description",
				Detail: "must not contain control characters (NUL, tab, newline and the like)"})
		}
	}
	return errors.Join(errs...)
}

// urlReason is what a URL refusal says to the client (never the URL).
func urlReason(err error) string {
	var urlErr *webhook.URLError
	if errors.As(err, &urlErr) {
		return urlErr.Reason
	}
	return "is invalid"
}

// checkURLHost checks the addresses an endpoint URL's host is or
// resolves to (webhook.CheckURL): 422 webhook_url_not_allowed for one
// deliveries may not reach, validation_failed for a host that does not
// exist, 503 when DNS does not answer.
func (h *handler) checkURLHost(ctx context.Context, rawURL string) error {
	_, err := webhook.CheckURL(ctx, rawURL, h.webhookConfig, h.resolver)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, webhook.ErrURLNotAllowed):
		return &problem.Error{Status: http.StatusUnprocessableEntity, Code: "webhook_url_not_allowed", Title: "Webhook URL not allowed",
			Detail: "The URL's host is or resolves to an address deliveries may not reach (loopback, private, link-local, " +
				"multicast, unspecified or reserved); errors says which.",
			Fields: []problem.FieldError{{Field: "url", Detail: urlReason(err)}}}
	case errors.Is(err, webhook.ErrInvalidURL):
		return problem.ValidationFailed([]problem.FieldError{{Field: "url", Detail: urlReason(err)}})
	}
	return fmt.Errorf("httpapi: check webhook URL: %w: %w", reservation.ErrUnavailable, err)
}

// queryParam returns a query parameter's value, and whether it was sent;
// sent more than once, it is refused as the field.
func queryParam(r *http.Request, name string) (string, bool, error) {
	v, sent := r.URL.Query()[name]
	if !sent {
		return "", false, nil
	}
	if len(v) != 1 {
		return "", true, &reservation.InvalidError{Field: name, Detail: "must be sent once"}
	}
	return v[0], true, nil
}

// pageLimit reads ?limit=, 1..most, deflt when left out.
func pageLimit(r *http.Request, deflt, most int) (int, error) {
	v, sent, err := queryParam(r, "limit")
	if err != nil || !sent {
		return deflt, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, &reservation.InvalidError{Field: "limit", Detail: fmt.Sprintf("must be an integer from 1 to %d", most)}
	}
	return n, nil
}

var errBadCursor = &reservation.InvalidError{Field: "after", Detail: "must be the next of a previous page"}

// webhookPage reads GET /webhooks's ?limit= and ?after=; after's ID is
// uuid.Nil for the first page.
func webhookPage(r *http.Request) (int, webhook.Endpoint, error) {
	limit, limitErr := pageLimit(r, defaultWebhookPage, maxWebhookPage)
	var after webhook.Endpoint
	v, sent, err := queryParam(r, "after")
	if err == nil && sent {
		if after, err = parseEndpointCursor(v); err != nil {
			err = errBadCursor
		}
	}
	if err := errors.Join(limitErr, err); err != nil {
		return 0, after, err
	}
	return limit, after, nil
}

// endpointCursor is the next of a page of endpoints that ends with e.
func endpointCursor(e webhook.Endpoint) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(e.CreatedAt.UnixMicro(), 10) + "," + e.ID.String()))
}

func parseEndpointCursor(s string) (webhook.Endpoint, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return webhook.Endpoint{}, err
	}
	micros, id, _ := strings.Cut(string(raw), ",")
	at, err := strconv.ParseInt(micros, 10, 64)
	if err != nil {
		return webhook.Endpoint{}, err
	}
	parsed, valid := parseUUID(id)
	if !valid || parsed == uuid.Nil {
		return webhook.Endpoint{}, errors.New("not an endpoint id")
	}
	return webhook.Endpoint{ID: parsed, CreatedAt: time.UnixMicro(at)}, nil
}

// deliveryPage reads GET /webhooks/{id}/deliveries's ?status=, ?limit=
// and ?after=; before is 0 for the first page.
func deliveryPage(r *http.Request) (status string, limit int, before int64, err error) {
	var errs []error
	status, _, err = queryParam(r, "status")
	switch {
	case err != nil:
		errs = append(errs, err)
	case status != "" && !slices.Contains([]string{webhook.StatusPending, webhook.StatusSucceeded, webhook.StatusFailed}, status):
		errs = append(errs, &reservation.InvalidError{Field: "status", Detail: "must be pending, succeeded or failed"})
	}
	limit, err = pageLimit(r, defaultDeliveryPage, maxDeliveryPage)
	errs = append(errs, err)
	v, sent, err := queryParam(r, "after")
	if err == nil && sent {
		if before = parseDeliveryCursor(v); before == 0 {
			err = errBadCursor
		}
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return "", 0, 0, err
	}
	return status, limit, before, nil
}

// deliveryCursor is the next of a page of deliveries that ends with seq.
func deliveryCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(seq, 10)))
}

// parseDeliveryCursor returns the seq a cursor names, 0 for no cursor
// deliveryCursor makes.
func parseDeliveryCursor(s string) int64 {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0
	}
	seq, valid := parseID(string(raw))
	if !valid {
		return 0
	}
	return seq
}

// parseEventID accepts an event id of at most maxEventIDLen visible ASCII
// characters; anything else names no delivery.
func parseEventID(s string) (string, bool) {
	if s == "" || len(s) > maxEventIDLen {
		return "", false
	}
	for i := range len(s) {
		if s[i] <= ' ' || s[i] > '~' {
			return "", false
		}
	}
	return s, true
}
