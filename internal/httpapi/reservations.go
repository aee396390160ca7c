package httpapi

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

type reserveRequest struct {
	ScheduleID *int64 `json:"scheduleId" validate:"required,min=1"`
	SeatID     *int   `json:"seatId" validate:"required,min=1"`
}

type reservationResponse struct {
	ID          uuid.UUID  `json:"id"`
	ScheduleID  int64      `json:"scheduleId"`
	SeatID      int        `json:"seatId"`
	UserID      string     `json:"userId"`
	CreatedAt   time.Time  `json:"createdAt"`
	Status      string     `json:"status"`
	CancelledAt *time.Time `json:"cancelledAt,omitempty"`
}

// Reservation statuses.
const (
	reservationActive    = "active"
	reservationCancelled = "cancelled"
)

func toReservationResponse(r reservation.Reservation) reservationResponse {
	resp := reservationResponse{
		ID: r.ID(), ScheduleID: r.ScheduleID(), SeatID: r.SeatID(), UserID: r.UserID(), CreatedAt: r.CreatedAt().UTC(),
		Status: reservationActive,
	}
	if r.Cancelled() {
		at := r.CancelledAt().UTC()
		resp.Status, resp.CancelledAt = reservationCancelled, &at
	}
	return resp
}

// decodeReserve reads a booking's body, the request the hammered seat
// answers thousands of times a second: a small body is read into a pooled
// buffer (not io.ReadAll's) and, in its usual form, by hand
// (parseReserveBody); other bodies are decoded by the library, and ids
// that are there and positive skip the validator's reflection (it answers
// the rest, with its field details). The buffer and the skipped validator
// are the hot seat's (BenchmarkHotSeatRequest; docs/performance.md, "The
// HTTP edge").
func (h *handler) decodeReserve(w http.ResponseWriter, r *http.Request) (scheduleID int64, seatID int, err error) {
	if !isJSONMediaType(r.Header.Get("Content-Type")) || r.ContentLength <= 0 || r.ContentLength > smallBody {
		return h.decodeReserveBody(w, r, nil)
	}
	buf := smallBodies.Get().(*[smallBody]byte)
	defer smallBodies.Put(buf)
	body := buf[:r.ContentLength]
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return 0, 0, problem.UnreadableBody
	}
	// Read to its end and closed, the body is not read again by the
	// server after the answer (to drain it for the next request).
	_ = r.Body.Close()
	if schedule, seat, ok := parseReserveBody(body); ok {
		return schedule, seat, nil
	}
	return h.decodeReserveBody(w, r, body)
}

// decodeReserveBody decodes a booking's body with the library: body when
// it was read already, else the request's.
func (h *handler) decodeReserveBody(w http.ResponseWriter, r *http.Request, body []byte) (scheduleID int64, seatID int, err error) {
	var req reserveRequest
	if body != nil {
		err = decodeBody(body, &req)
	} else {
		err = decodeJSON(w, r, &req)
	}
	if err != nil {
		return 0, 0, err
	}
	if req.ScheduleID != nil && *req.ScheduleID >= 1 && req.SeatID != nil && *req.SeatID >= 1 {
		return *req.ScheduleID, *req.SeatID, nil
	}
	return 0, 0, validate(h.validate, &req)
}

// smallBodies are the buffers small booking bodies are read into.
var smallBodies = sync.Pool{New: func() any { return new([smallBody]byte) }}

// smallBody is the largest booking body decodeReserve reads into a pooled
// buffer; {"scheduleId":N,"seatId":M} is under 64 bytes.
const smallBody = 128

// reserve answers 200 with the reservation.
func (h *handler) reserve(w http.ResponseWriter, r *http.Request) error {
	scheduleID, seatID, err := h.decodeReserve(w, r)
	if err != nil {
		return err
	}
	// `Prefer: wait=N` waits up to N seconds (capped) for a locked seat
	// instead of answering seat_locked at once.
	wait, preferred := preferredWait(r.Header)
	if preferred {
		wait = min(wait, h.maxWait)
		w.Header().Set("Preference-Applied", "wait="+strconv.Itoa(int(wait/time.Second)))
	}
	// The Idempotency-Key's claim, if the request sent one: stored with
	// the reservation, looked up first when resumed.
	claim, _ := idempotency.ClaimFrom(r.Context())
	if err := h.requireAdmission(r, scheduleID); err != nil {
		return err
	}
	res, err := h.bookings.Reserve(r.Context(), reservation.ReserveCommand{
		ScheduleID: scheduleID,
		SeatID:     seatID,
		UserID:     principalFrom(r.Context()).UserID,
		Wait:       wait,
		Claim:      claim.ID,
		Resumed:    claim.Resumed,
	})
	if err != nil {
		return err
	}
	markReplayed(w, res.Recovered)
	return ok(w, http.StatusOK, toReservationResponse(res.Reservation))
}

func (h *handler) getReservation(w http.ResponseWriter, r *http.Request) error {
	id, valid := parseUUID(chi.URLParam(r, "id"))
	if !valid {
		return reservation.ErrReservationNotFound
	}
	res, err := h.bookings.Reservation(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, toReservationResponse(res))
}

// cancelReservation answers 204, again on a cancelled reservation.
func (h *handler) cancelReservation(w http.ResponseWriter, r *http.Request) error {
	id, valid := parseUUID(chi.URLParam(r, "id"))
	if !valid {
		return reservation.ErrReservationNotFound
	}
	if err := emptyBody(w, r); err != nil {
		return err
	}
	again, err := h.bookings.CancelReservation(r.Context(), id, principalFrom(r.Context()).UserID)
	if err != nil {
		return err
	}
	markReplayed(w, again && resumedClaim(r))
	return noContent(w)
}
