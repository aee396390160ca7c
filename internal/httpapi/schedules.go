package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/reservation"
)

type createScheduleRequest struct {
	Title     *string `json:"title" validate:"required,notblank,max=200"`
	StartsAt  *string `json:"startsAt" validate:"required,rfc3339"`
	SeatCount *int    `json:"seatCount" validate:"required,min=1,max=2000"`
}

type scheduleResponse struct {
	ID        int64     `json:"id"`
	Title     string    `json:"title"`
	StartsAt  time.Time `json:"startsAt"`
	SeatCount int       `json:"seatCount"`
}

func (h *handler) createSchedule(w http.ResponseWriter, r *http.Request) {
	var req createScheduleRequest
	if e := decodeJSON(w, r, &req); e != nil {
		writeProblem(w, r, *e)
		return
	}
	if e := validate(h.validate, &req); e != nil {
		writeProblem(w, r, *e)
		return
	}
	startsAt, _ := time.Parse(time.RFC3339Nano, *req.StartsAt) // validated above
	s, err := h.bookings.CreateSchedule(r.Context(), *req.Title, startsAt, *req.SeatCount)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusCreated, scheduleResponse{
		ID: s.ID(), Title: s.Title(), StartsAt: s.StartsAt().UTC(), SeatCount: s.SeatCount(),
	})
}

type seatResponse struct {
	SeatID int    `json:"seatId"`
	Status string `json:"status"`
}

type seatMapResponse struct {
	ScheduleID int64          `json:"scheduleId"`
	Seats      []seatResponse `json:"seats"`
}

func (h *handler) seatMap(w http.ResponseWriter, r *http.Request) {
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		writeError(w, r, h.log, reservation.ErrScheduleNotFound)
		return
	}
	seats, err := h.bookings.SeatMap(r.Context(), id)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	resp := seatMapResponse{ScheduleID: id, Seats: make([]seatResponse, len(seats))}
	for i, s := range seats {
		resp.Seats[i] = seatResponse{SeatID: s.ID, Status: string(s.Status)}
	}
	ok(w, http.StatusOK, resp)
}

// parseID accepts a positive decimal id; anything else names no schedule.
func parseID(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}
