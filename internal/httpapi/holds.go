package httpapi

import (
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

type holdRequest struct {
	ScheduleID *int64 `json:"scheduleId" validate:"required,min=1"`
	SeatIDs    []int  `json:"seatIds" validate:"required"`
}

type holdResponse struct {
	ID         uuid.UUID `json:"id"`
	ScheduleID int64     `json:"scheduleId"`
	SeatIDs    []int     `json:"seatIds"`
	UserID     string    `json:"userId"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

func toHoldResponse(h reservation.Hold) holdResponse {
	return holdResponse{
		ID: h.ID(), ScheduleID: h.ScheduleID(), SeatIDs: h.SeatIDs(), UserID: h.UserID(), Status: string(h.Status()),
		CreatedAt: h.CreatedAt().UTC(), ExpiresAt: h.ExpiresAt().UTC(),
	}
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
	claim, _ := idempotency.ClaimFrom(r.Context())
	cmd := reservation.HoldCommand{ScheduleID: value(req.ScheduleID), SeatIDs: req.SeatIDs, UserID: principalFrom(r.Context()).UserID,
		Claim: claim.ID, Resumed: claim.Resumed}
	if err := validate(h.validate, &req, cmd.Validate()); err != nil {
		return err
	}
	hold, err := h.checkout.Hold(r.Context(), cmd)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/holds/"+hold.ID().String())
	return ok(w, http.StatusCreated, toHoldResponse(hold))
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
	return ok(w, http.StatusOK, toHoldResponse(hold))
}

func (h *handler) confirmHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	booked, err := h.checkout.Confirm(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	resp := confirmResponse{HoldID: id, Reservations: make([]reservationResponse, len(booked))}
	for i, res := range booked {
		resp.Reservations[i] = toReservationResponse(res)
	}
	return ok(w, http.StatusOK, resp)
}

func (h *handler) releaseHold(w http.ResponseWriter, r *http.Request) error {
	id, valid := holdID(r)
	if !valid {
		return reservation.ErrHoldNotFound
	}
	if err := h.checkout.Release(r.Context(), id, principalFrom(r.Context()).UserID); err != nil {
		return err
	}
	return noContent(w)
}
