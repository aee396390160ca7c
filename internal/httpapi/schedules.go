package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/reservation"
)

type createScheduleRequest struct {
	Title     *string `json:"title" validate:"required,notblank,nocontrol,title"`
	StartsAt  *string `json:"startsAt" validate:"required,rfc3339"`
	SeatCount *int    `json:"seatCount" validate:"required,seatcount"`
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
	w.Header().Set("Location", "/schedules/"+strconv.FormatInt(s.ID(), 10))
	ok(w, http.StatusCreated, toScheduleResponse(s))
}

func toScheduleResponse(s reservation.Schedule) scheduleResponse {
	return scheduleResponse{ID: s.ID(), Title: s.Title(), StartsAt: s.StartsAt().UTC(), SeatCount: s.SeatCount()}
}

type scheduleListResponse struct {
	Schedules []scheduleResponse `json:"schedules"`
	// Next is the `after` of the next page; null on the last one.
	Next *int64 `json:"next"`
}

// listSchedules answers one page of schedules, newest first:
// ?limit=N (1..100, default 20) &after=ID (the previous page's next).
func (h *handler) listSchedules(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	limit, after := reservation.DefaultSchedulePage, int64(0)
	var fields []fieldError
	if v, ok := query["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || len(v) > 1 || n < 1 || n > reservation.MaxSchedulePage {
			fields = append(fields, fieldError{Field: "limit",
				Detail: fmt.Sprintf("must be one whole number between 1 and %d", reservation.MaxSchedulePage)})
		}
		limit = n
	}
	if v, ok := query["after"]; ok {
		id, valid := parseID(v[0])
		if !valid || len(v) > 1 {
			fields = append(fields, fieldError{Field: "after", Detail: "must be the next value of the previous page"})
		}
		after = id
	}
	if fields != nil {
		writeProblem(w, r, validationFailed(fields))
		return
	}
	page, err := h.bookings.Schedules(r.Context(), after, limit)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	resp := scheduleListResponse{Schedules: make([]scheduleResponse, len(page.Schedules))}
	for i, s := range page.Schedules {
		resp.Schedules[i] = toScheduleResponse(s)
	}
	if page.Next != 0 {
		resp.Next = &page.Next
	}
	ok(w, http.StatusOK, resp)
}

func (h *handler) getSchedule(w http.ResponseWriter, r *http.Request) {
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		writeError(w, r, h.log, reservation.ErrScheduleNotFound)
		return
	}
	s, err := h.bookings.Schedule(r.Context(), id)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	ok(w, http.StatusOK, toScheduleResponse(s))
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
	body, err := json.Marshal(resp)
	if err != nil {
		writeError(w, r, h.log, err)
		return
	}
	body = append(body, '\n')
	// The ETag is the body's digest: equal maps, equal tags, on every
	// instance. A client that has the map gets 304 and no body.
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	w.Header()["Etag"] = []string{etag}
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.Header()["Cache-Control"] = noCache
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// Cached copies must be revalidated, which the ETag makes cheap.
	w.Header()["Cache-Control"] = noCache
	writeBody(w, contentTypeJSON, http.StatusOK, body)
}

// etagMatches applies If-None-Match (RFC 9110 13.1.2): "*" or any listed
// tag, compared weakly (a W/ prefix is ignored).
func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" {
		return false
	}
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}
