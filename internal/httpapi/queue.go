package httpapi

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
)

// WaitingRoom is what the HTTP edge needs of the waiting room.
type WaitingRoom interface {
	Put(ctx context.Context, scheduleID int64, s waitroom.Settings) (waitroom.Settings, error)
	Queue(ctx context.Context, scheduleID int64) (waitroom.Settings, waitroom.Counts, error)
	Delete(ctx context.Context, scheduleID int64) error
	Join(ctx context.Context, scheduleID int64, userID string) (waitroom.Ticket, bool, error)
	Ticket(ctx context.Context, ticketID, userID string) (waitroom.Ticket, error)
	Leave(ctx context.Context, ticketID, userID string) error
	Check(ctx context.Context, scheduleID int64, userID, admission string) (gated bool, err error)
	Watch(ctx context.Context, ticketID, userID string) (*waitroom.Watch, waitroom.Ticket, error)
	Unwatch(w *waitroom.Watch)
}

// admissionHeader carries the admission of a request for a queued
// schedule's seats.
const admissionHeader = "Admission"

type queueRequest struct {
	OpensAt             *string `json:"opensAt" validate:"required,rfc3339"`
	AdmitPerSecond      *int    `json:"admitPerSecond" validate:"required"`
	MaxActive           *int    `json:"maxActive"`
	AdmissionTTLSeconds *int    `json:"admissionTtlSeconds"`
}

type queueResponse struct {
	ScheduleID          int64          `json:"scheduleId"`
	OpensAt             time.Time      `json:"opensAt"`
	AdmitPerSecond      int            `json:"admitPerSecond"`
	MaxActive           *int           `json:"maxActive"`
	AdmissionTTLSeconds int            `json:"admissionTtlSeconds"`
	Counts              *countsReponse `json:"counts,omitempty"`
}

type countsReponse struct {
	Prequeue int64 `json:"prequeue"`
	Waiting  int64 `json:"waiting"`
	Active   int64 `json:"active"`
	Admitted int64 `json:"admitted"`
}

type ticketResponse struct {
	Ticket               string     `json:"ticket"`
	ScheduleID           int64      `json:"scheduleId"`
	State                string     `json:"state"`
	Position             *int       `json:"position"`
	EstimatedWaitSeconds *float64   `json:"estimatedWaitSeconds"`
	OpensAt              time.Time  `json:"opensAt"`
	Admission            string     `json:"admission,omitempty"`
	AdmissionExpiresAt   *time.Time `json:"admissionExpiresAt,omitempty"`
}

func toQueueResponse(id int64, s waitroom.Settings) queueResponse {
	resp := queueResponse{ScheduleID: id, OpensAt: reservation.ReadableStart(s.OpensAt.UTC()), AdmitPerSecond: s.AdmitPerSecond,
		AdmissionTTLSeconds: int(s.AdmissionTTL / time.Second)}
	if s.MaxActive > 0 {
		resp.MaxActive = &s.MaxActive
	}
	return resp
}

func toTicketResponse(t waitroom.Ticket) ticketResponse {
	resp := ticketResponse{Ticket: t.ID, ScheduleID: t.ScheduleID, State: string(t.State), OpensAt: reservation.ReadableStart(t.OpensAt.UTC()),
		Admission: t.Admission}
	if t.State == waitroom.Waiting {
		pos := t.Position
		resp.Position = &pos
		if !t.EstimatedWaitUnknown {
			wait := math.Round(t.EstimatedWait.Seconds()*10) / 10
			resp.EstimatedWaitSeconds = &wait
		}
	}
	if !t.AdmissionExpiresAt.IsZero() {
		at := t.AdmissionExpiresAt.UTC()
		resp.AdmissionExpiresAt = &at
	}
	return resp
}

// queueScheduleID reads the {id} of a schedule's queue path and checks
// that the schedule exists.
func (h *handler) queueScheduleID(r *http.Request) (int64, error) {
	if h.room == nil {
		return 0, waitroom.ErrNoStore
	}
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		return 0, reservation.ErrScheduleNotFound
	}
	if _, err := h.bookings.Schedule(r.Context(), id); err != nil {
		return 0, err
	}
	return id, nil
}

// putQueue creates or changes a schedule's queue (admin).
func (h *handler) putQueue(w http.ResponseWriter, r *http.Request) error {
	id, err := h.queueScheduleID(r)
	if err != nil {
		return err
	}
	var req queueRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	opensAt, _ := parseDateTime(value(req.OpensAt))
	s := waitroom.Settings{OpensAt: opensAt, AdmitPerSecond: value(req.AdmitPerSecond), MaxActive: value(req.MaxActive),
		AdmissionTTL: waitroom.DefaultAdmissionTTL}
	var invalid []error
	if req.AdmissionTTLSeconds != nil {
		ttl, err := waitroom.AdmissionTTLOf(*req.AdmissionTTLSeconds)
		if err == nil {
			s.AdmissionTTL = ttl
		}
		invalid = append(invalid, err)
	}
	invalid = append(invalid, s.Validate())
	if req.MaxActive != nil && *req.MaxActive == 0 {
		invalid = append(invalid, &reservation.InvalidError{Field: "maxActive",
			Detail: "must be from 1 to " + strconv.Itoa(waitroom.MaxActiveLimit) + "; leave it out for no cap"})
	}
	if err := validate(h.validate, &req, invalid...); err != nil {
		return err
	}
	stored, err := h.room.Put(r.Context(), id, s)
	if err != nil {
		if fields := problem.InvalidFields(err); fields != nil {
			return problem.ValidationFailed(fields)
		}
		return err
	}
	return ok(w, http.StatusOK, toQueueResponse(id, stored))
}

// getQueue answers a schedule's queue with its counts (admin).
func (h *handler) getQueue(w http.ResponseWriter, r *http.Request) error {
	id, err := h.queueScheduleID(r)
	if err != nil {
		return err
	}
	s, c, err := h.room.Queue(r.Context(), id)
	if err != nil {
		return err
	}
	resp := toQueueResponse(id, s)
	resp.Counts = &countsReponse{Prequeue: c.Prequeue, Waiting: c.Waiting, Active: c.Active, Admitted: c.Admitted}
	return ok(w, http.StatusOK, resp)
}

// deleteQueue removes a schedule's queue (admin): its sale is open to
// everyone again.
func (h *handler) deleteQueue(w http.ResponseWriter, r *http.Request) error {
	id, err := h.queueScheduleID(r)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	if err := h.room.Delete(r.Context(), id); err != nil {
		return err
	}
	return noContent(w)
}

// joinQueue gives the caller a place in a schedule's queue: 201 with a
// new ticket, 200 with the one they have. It takes no input: a body is
// refused as on the other bodiless calls, before anything is joined.
func (h *handler) joinQueue(w http.ResponseWriter, r *http.Request) error {
	id, err := h.queueScheduleID(r)
	if err != nil {
		return err
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	t, created, err := h.room.Join(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	w.Header().Set("Location", "/queue/"+t.ID)
	setRetryAfter(w, t)
	return ok(w, status, toTicketResponse(t))
}

// getTicket answers where the caller's ticket stands, with Retry-After
// saying when to ask again while it waits.
func (h *handler) getTicket(w http.ResponseWriter, r *http.Request) error {
	if h.room == nil {
		return waitroom.ErrTicketNotFound
	}
	t, err := h.room.Ticket(r.Context(), chi.URLParam(r, "ticket"), principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	setRetryAfter(w, t)
	return ok(w, http.StatusOK, toTicketResponse(t))
}

// leaveQueue takes the caller's ticket out of the line or gives up its
// admission.
func (h *handler) leaveQueue(w http.ResponseWriter, r *http.Request) error {
	if h.room == nil {
		return waitroom.ErrTicketNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	if err := h.room.Leave(r.Context(), chi.URLParam(r, "ticket"), principalFrom(r.Context()).UserID); err != nil {
		return err
	}
	return noContent(w)
}

// Polling: a waiting buyer is told to ask again when its turn should
// come (its estimated wait), at most maxPollInterval later and at least
// a second: about twice before its turn, and once more for every
// maxPollInterval of a longer wait, so a queue's polls follow its rate of
// admission, not the size of its crowd.
// Asking at a fraction of the wait instead had every buyer ask more the
// further back it stood, and a crowd's polls took whatever the service
// had spare. A buyer whose turn comes sooner than estimated (those ahead
// left) learns it at its next poll, well within its admission's time;
// its stream tells at once. Before the opening, a buyer asks at the
// opening (spread over a few seconds: everyone asks then). A buyer whose
// wait is unknown waits on an admitted buyer leaving, which may come at
// any moment: it asks every unknownWaitPollInterval.
const (
	maxPollInterval         = 30 * time.Second
	openingSpread           = 3 * time.Second
	unknownWaitPollInterval = 10 * time.Second
)

// setRetryAfter tells a waiting buyer when to ask again.
func setRetryAfter(w http.ResponseWriter, t waitroom.Ticket) {
	var after time.Duration
	switch t.State {
	case waitroom.Prequeue:
		after = min(time.Until(t.OpensAt), maxPollInterval) + rand.N(openingSpread)
	case waitroom.Waiting:
		after = min(t.EstimatedWait, maxPollInterval)
		if t.EstimatedWaitUnknown {
			after = unknownWaitPollInterval
		}
	default:
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(after.Seconds())))))
}

// requireAdmission lets a request for a schedule's seats through while
// the schedule has no queue, or with an admission of the caller's for it.
//
// A request sent again with an Idempotency-Key whose first request's
// answer was lost (a resumed claim) finishes that request without an
// admission, which may have run out since, only when that request passed
// the gate: the key records it (idempotency.Store.Admit), before any work.
// Every other resumed claim is gated like a new request. A request the
// gate refuses, or could not check, did no work: its key is forgotten
// whatever its answer (refusedBeforeWork), so that no retry can resume
// it.
func (h *handler) requireAdmission(r *http.Request, scheduleID int64) error {
	if h.room == nil {
		return nil
	}
	claim, keyed := idempotency.ClaimFrom(r.Context())
	if keyed && claim.Resumed && claim.Admitted {
		return nil
	}
	gated, err := h.room.Check(r.Context(), scheduleID, principalFrom(r.Context()).UserID, r.Header.Get(admissionHeader))
	if err == nil && gated && keyed {
		err = h.keys.Admit(r.Context(), claim)
	}
	if err == nil {
		return nil
	}
	refusedBeforeWork(r)
	if errors.Is(err, waitroom.ErrAdmissionRequired) {
		path := "/schedules/" + strconv.FormatInt(scheduleID, 10) + "/queue"
		return &problem.Error{Status: http.StatusForbidden, Code: "admission_required", Title: "Admission required",
			Detail: "This schedule's sale has a queue: join it (POST " + path + "), and send the admission it gives in the Admission header.",
			Queue:  path}
	}
	return err
}
