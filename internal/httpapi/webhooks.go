package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Webhooks is what the HTTP edge needs of the webhook endpoints' store.
// Nothing it returns holds a secret.
type Webhooks interface {
	Create(ctx context.Context, e webhook.Endpoint, secret webhook.Secret) (webhook.Endpoint, error)
	Endpoint(ctx context.Context, id uuid.UUID) (webhook.Endpoint, error)
	Endpoints(ctx context.Context, after webhook.Endpoint, limit int) ([]webhook.Endpoint, error)
	Update(ctx context.Context, id uuid.UUID, change webhook.EndpointChange) (webhook.Endpoint, error)
	Delete(ctx context.Context, id uuid.UUID) error
	RotateSecret(ctx context.Context, id uuid.UUID, secret webhook.Secret, grace time.Duration) error
	Deliveries(ctx context.Context, endpointID uuid.UUID, status string, before int64, limit int) ([]webhook.Delivery, error)
	RetryDelivery(ctx context.Context, endpointID uuid.UUID, eventID string) error
}

type createWebhookRequest struct {
	URL         *string  `json:"url" validate:"required"`
	Events      []string `json:"events"`
	Description *string  `json:"description"`
}

type patchWebhookRequest struct {
	URL         *string  `json:"url"`
	Events      []string `json:"events"`
	Enabled     *bool    `json:"enabled"`
	Description *string  `json:"description"`
}

type webhookResponse struct {
	ID          uuid.UUID `json:"id"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	// DisabledReason says why the service disabled the endpoint ("gone":
	// it answered 410); null otherwise.
	DisabledReason *string   `json:"disabledReason"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// createdWebhookResponse is the endpoint with its secret: the only answer
// that shows it, with the rotation's.
type createdWebhookResponse struct {
	webhookResponse
	Secret string `json:"secret"`
}

type secretResponse struct {
	Secret string `json:"secret"`
}

type webhookListResponse struct {
	Webhooks []webhookResponse `json:"webhooks"`
	// Next is the `after` of the next page; null on the last one.
	Next *string `json:"next"`
}

type deliveryResponse struct {
	EventID        string     `json:"eventId"`
	Type           string     `json:"type"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

type deliveryListResponse struct {
	Deliveries []deliveryResponse `json:"deliveries"`
	Next       *string            `json:"next"`
}

func toWebhookResponse(e webhook.Endpoint) webhookResponse {
	resp := webhookResponse{ID: e.ID, URL: e.URL, Events: e.Events, Description: e.Description, Enabled: e.Enabled,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC()}
	if resp.Events == nil {
		resp.Events = []string{}
	}
	if e.DisabledReason != "" {
		reason := e.DisabledReason
		resp.DisabledReason = &reason
	}
	return resp
}

func toDeliveryResponse(d webhook.Delivery) deliveryResponse {
	resp := deliveryResponse{EventID: d.EventID, Type: d.Type, Status: d.Status, Attempts: d.Attempts,
		CreatedAt: d.CreatedAt.UTC()}
	if !d.LastAttemptAt.IsZero() {
		at := d.LastAttemptAt.UTC()
		resp.LastAttemptAt = &at
	}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		resp.LastStatusCode = &code
	}
	if d.LastError != "" {
		msg := d.LastError
		resp.LastError = &msg
	}
	if !d.NextAttemptAt.IsZero() {
		at := d.NextAttemptAt.UTC()
		resp.NextAttemptAt = &at
	}
	return resp
}

// webhookRoutes are the admin's routes of webhook endpoints.
func (h *handler) webhookRoutes(r chi.Router) {
	r.Post("/webhooks", handle(h.createWebhook))
	r.Get("/webhooks", handle(h.listWebhooks))
	r.Get("/webhooks/{id}", handle(h.getWebhook))
	r.Patch("/webhooks/{id}", handle(h.patchWebhook))
	r.Delete("/webhooks/{id}", handle(h.deleteWebhook))
	r.Post("/webhooks/{id}/secret", handle(h.rotateWebhookSecret))
	r.Get("/webhooks/{id}/deliveries", handle(h.listDeliveries))
	r.Post("/webhooks/{id}/deliveries/{eventId}/retry", handle(h.retryDelivery))
}

// webhookID reads the {id} of a webhook path: a malformed one names no
// endpoint.
func webhookID(r *http.Request) (uuid.UUID, error) {
	id, valid := parseUUID(chi.URLParam(r, "id"))
	if !valid {
		return uuid.Nil, webhook.ErrEndpointNotFound
	}
	return id, nil
}

// createWebhook registers an endpoint (admin): 201 with its secret, shown
// this once.
func (h *handler) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var req createWebhookRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := validate(h.validate, &req, h.checkEndpoint(req.URL, req.Events, req.Description)); err != nil {
		return err
	}
	if err := h.checkURLHost(r.Context(), *req.URL); err != nil {
		return err
	}
	e := webhook.Endpoint{URL: *req.URL, Events: req.Events, Description: value(req.Description)}
	if e.Events == nil {
		e.Events = webhook.EventTypes()
	}
	secret := webhook.NewSecret()
	created, err := h.webhooks.Create(r.Context(), e, secret)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/webhooks/"+created.ID.String())
	return ok(w, http.StatusCreated, createdWebhookResponse{webhookResponse: toWebhookResponse(created), Secret: secret.Reveal()})
}

// getWebhook answers one endpoint, without its secret (admin).
func (h *handler) getWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	e, err := h.webhooks.Endpoint(r.Context(), id)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, toWebhookResponse(e))
}

// listWebhooks answers one page of endpoints, newest first (admin):
// ?limit=N (1..maxWebhookPage, default defaultWebhookPage) &after=the
// previous page's next.
func (h *handler) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	limit, after, err := webhookPage(r)
	if err != nil {
		return err
	}
	list, err := h.webhooks.Endpoints(r.Context(), after, limit+1)
	if err != nil {
		return err
	}
	resp := webhookListResponse{Webhooks: make([]webhookResponse, 0, min(len(list), limit))}
	for _, e := range list[:min(len(list), limit)] {
		resp.Webhooks = append(resp.Webhooks, toWebhookResponse(e))
	}
	if len(list) > limit {
		next := endpointCursor(list[limit-1])
		resp.Next = &next
	}
	return ok(w, http.StatusOK, resp)
}

// patchWebhook changes an endpoint's URL, events, description or whether
// it is enabled (admin); the members left out stay as they are.
func (h *handler) patchWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	var req patchWebhookRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if err := validate(h.validate, &req, h.checkEndpoint(req.URL, req.Events, req.Description)); err != nil {
		return err
	}
	if req.URL != nil {
		if err := h.checkURLHost(r.Context(), *req.URL); err != nil {
			return err
		}
	}
	change := webhook.EndpointChange{URL: req.URL, Events: req.Events, Description: req.Description, Enabled: req.Enabled}
	var e webhook.Endpoint
	if req.URL == nil && req.Events == nil && req.Description == nil && req.Enabled == nil {
		e, err = h.webhooks.Endpoint(r.Context(), id)
	} else {
		e, err = h.webhooks.Update(r.Context(), id, change)
	}
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, toWebhookResponse(e))
}

// deleteWebhook removes an endpoint and its delivery log (admin).
func (h *handler) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	if err := h.webhooks.Delete(r.Context(), id); err != nil {
		return err
	}
	return noContent(w)
}

// rotateWebhookSecret gives an endpoint a new secret, shown this once
// (admin); the old one stays valid for webhook.SecretGrace.
func (h *handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	secret := webhook.NewSecret()
	if err := h.webhooks.RotateSecret(r.Context(), id, secret, webhook.SecretGrace); err != nil {
		return err
	}
	return ok(w, http.StatusOK, secretResponse{Secret: secret.Reveal()})
}

// listDeliveries answers one page of an endpoint's delivery log, newest
// first (admin): ?status= &limit= &after=.
func (h *handler) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	status, limit, before, err := deliveryPage(r)
	if err != nil {
		return err
	}
	list, err := h.webhooks.Deliveries(r.Context(), id, status, before, limit+1)
	if err != nil {
		return err
	}
	resp := deliveryListResponse{Deliveries: make([]deliveryResponse, 0, min(len(list), limit))}
	for _, d := range list[:min(len(list), limit)] {
		resp.Deliveries = append(resp.Deliveries, toDeliveryResponse(d))
	}
	if len(list) > limit {
		next := deliveryCursor(list[limit-1].Seq)
		resp.Next = &next
	}
	return ok(w, http.StatusOK, resp)
}

// retryDelivery has a delivery tried again now, whatever its status
// (admin): 202, the worker sends it.
func (h *handler) retryDelivery(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookID(r)
	if err != nil {
		return err
	}
	eventID, valid := parseEventID(chi.URLParam(r, "eventId"))
	if !valid {
		if _, err := h.webhooks.Endpoint(r.Context(), id); err != nil {
			return err
		}
		return webhook.ErrDeliveryNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	if err := h.webhooks.RetryDelivery(r.Context(), id, eventID); err != nil {
		return err
	}
	w.Header()["Cache-Control"] = problem.NoStore
	w.WriteHeader(http.StatusAccepted)
	return nil
}
