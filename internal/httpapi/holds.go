package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

// holdRequest names its seats (seatIds) or asks for the best available
// (quantity, with category, section and adjacent), never both.
type holdRequest struct {
	ScheduleID *int64  `json:"scheduleId" validate:"required,min=1"`
	SeatIDs    []int   `json:"seatIds" validate:"required_without=Quantity,excluded_with=Quantity"`
	Quantity   *int    `json:"quantity"`
	Category   *string `json:"category" validate:"omitnil,nonempty,nocontrol"`
	Section    *string `json:"section" validate:"omitnil,nonempty,nocontrol"`
	Adjacent   *bool   `json:"adjacent"`
}

type holdResponse struct {
	ID         uuid.UUID `json:"id"`
	ScheduleID int64     `json:"scheduleId"`
	SeatIDs    []int     `json:"seatIds"`
	// SeatLabels are the seats' labels ("C7"), in the order of SeatIDs.
	SeatLabels []string  `json:"seatLabels,omitempty"`
	UserID     string    `json:"userId"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// holdResponse is the hold's JSON, its seats labelled from the schedule's
// layout (kept in memory once read; a schedule that cannot be read just
// leaves the labels out: the ids say everything).
func (h *handler) holdResponse(ctx context.Context, hold reservation.Hold) holdResponse {
	return toHoldResponse(ctx, h.bookings.Schedule, hold)
}

// scheduleFunc reads a schedule, as Bookings.Schedule does.
type scheduleFunc func(ctx context.Context, id int64) (reservation.Schedule, error)

// toHoldResponse is the hold's JSON as GET /holds/{id} shows it, its seats
// labelled from the layout schedule reads; the webhook events' data is
// built by it too (EventData).
func toHoldResponse(ctx context.Context, schedule scheduleFunc, hold reservation.Hold) holdResponse {
	resp := holdResponse{
		ID: hold.ID(), ScheduleID: hold.ScheduleID(), SeatIDs: hold.SeatIDs(), UserID: hold.UserID(), Status: string(hold.Status()),
		CreatedAt: hold.CreatedAt().UTC(), ExpiresAt: hold.ExpiresAt().UTC(),
	}
	if schedule, err := schedule(ctx, hold.ScheduleID()); err == nil {
		layout := schedule.Layout()
		resp.SeatLabels = make([]string, len(resp.SeatIDs))
		for i, seat := range resp.SeatIDs {
			place, _ := layout.Place(seat)
			resp.SeatLabels[i] = place.Label
		}
	}
	return resp
}

type confirmResponse struct {
	HoldID       uuid.UUID             `json:"holdId"`
	Reservations []reservationResponse `json:"reservations"`
}

// createHold answers 201 with the hold, all seats or none.
func (h *handler) createHold(w http.ResponseWriter, r *http.Request) error {
	var req holdRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Quantity != nil || req.Category != nil || req.Section != nil || req.Adjacent != nil {
		return h.holdBest(w, r, req)
	}
	claim, _ := idempotency.ClaimFrom(r.Context())
	cmd := reservation.HoldCommand{ScheduleID: value(req.ScheduleID), SeatIDs: req.SeatIDs, UserID: principalFrom(r.Context()).UserID,
		Claim: claim.ID, Resumed: claim.Resumed}
	if err := validate(h.validate, &req, cmd.Validate()); err != nil {
		return err
	}
	if err := h.requireAdmission(r, cmd.ScheduleID); err != nil {
		return err
	}
	held, err := h.checkout.Hold(r.Context(), cmd)
	if err != nil {
		return err
	}
	markReplayed(w, held.Recovered)
	w.Header().Set("Location", "/holds/"+held.ID().String())
	return ok(w, http.StatusCreated, h.holdResponse(r.Context(), held.Hold))
}

// holdAttemptsHeader tells how many choices of seats a best-available
// hold tried before one was held (or it gave up).
const holdAttemptsHeader = "Hold-Attempts"

// holdBest answers 201 with the best available seats held for the user
// (reservation.Service.HoldBest), all of them or none.
func (h *handler) holdBest(w http.ResponseWriter, r *http.Request, req holdRequest) error {
	claim, _ := idempotency.ClaimFrom(r.Context())
	cmd := reservation.BestHoldCommand{ScheduleID: value(req.ScheduleID), Quantity: value(req.Quantity),
		Category: value(req.Category), Section: value(req.Section), Adjacent: req.Adjacent == nil || *req.Adjacent,
		UserID: principalFrom(r.Context()).UserID, Claim: claim.ID, Resumed: claim.Resumed}
	invalid := cmd.Validate()
	if req.Quantity == nil && req.SeatIDs == nil {
		invalid = errors.Join(invalid, &reservation.InvalidError{Field: "quantity", Detail: "is required with category, section or adjacent"})
	}
	if err := validate(h.validate, &req, invalid); err != nil {
		return err
	}
	if err := h.requireAdmission(r, cmd.ScheduleID); err != nil {
		return err
	}
	held, attempts, err := h.checkout.HoldBest(r.Context(), cmd)
	if attempts > 0 {
		w.Header().Set(holdAttemptsHeader, strconv.Itoa(attempts))
		h.observer.BestAvailable(attempts, err == nil)
	}
	if err != nil {
		return err
	}
	markReplayed(w, held.Recovered)
	w.Header().Set("Location", "/holds/"+held.ID().String())
	return ok(w, http.StatusCreated, h.holdResponse(r.Context(), held.Hold))
}

// holdID reads the {id} of a hold path; a malformed id names no hold.
func holdID(r *http.Request) (uuid.UUID, bool) {
	return parseUUID(chi.URLParam(r, "id"))
}

func (h *handler) getHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	hold, err := h.checkout.HoldByID(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, h.holdResponse(r.Context(), hold))
}

func (h *handler) confirmHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	confirmed, err := h.checkout.Confirm(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	markReplayed(w, confirmed.Again && resumedClaim(r))
	resp := confirmResponse{HoldID: id, Reservations: make([]reservationResponse, len(confirmed.Reservations))}
	for i, res := range confirmed.Reservations {
		resp.Reservations[i] = toReservationResponse(res)
	}
	return ok(w, http.StatusOK, resp)
}

func (h *handler) releaseHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	if err := h.checkout.Release(r.Context(), id, principalFrom(r.Context()).UserID); err != nil {
		return err
	}
	return noContent(w)
}
