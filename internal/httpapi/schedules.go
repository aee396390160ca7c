package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
)

// createScheduleRequest names its seats by seatCount (one row "A") or by
// layout, never both.
type createScheduleRequest struct {
	Title     *string        `json:"title" validate:"required,nocontrol"`
	StartsAt  *string        `json:"startsAt" validate:"required,rfc3339"`
	SeatCount *int           `json:"seatCount" validate:"required_without=Layout,excluded_with=Layout"`
	Layout    *layoutRequest `json:"layout"`
}

// layoutRequest is a venue of rows or of sections, never both.
type layoutRequest struct {
	Rows     []rowRequest     `json:"rows" validate:"required_without=Sections,excluded_with=Sections,dive"`
	Sections []sectionRequest `json:"sections" validate:"dive"`
}

type sectionRequest struct {
	Name     *string      `json:"name" validate:"required,nocontrol"`
	Category *string      `json:"category" validate:"omitnil,nonempty,nocontrol"`
	Rows     []rowRequest `json:"rows" validate:"required,dive"`
}

type rowRequest struct {
	Label    *string `json:"label" validate:"required,nocontrol"`
	Seats    *int    `json:"seats" validate:"required"`
	Category *string `json:"category" validate:"omitnil,nonempty,nocontrol"`
}

type scheduleResponse struct {
	ID        int64          `json:"id"`
	Title     string         `json:"title"`
	StartsAt  time.Time      `json:"startsAt"`
	SeatCount int            `json:"seatCount"`
	Layout    layoutResponse `json:"layout"`
}

// layoutResponse is the layout as it was made: rows, or sections.
type layoutResponse struct {
	Rows     []rowResponse     `json:"rows,omitempty"`
	Sections []sectionResponse `json:"sections,omitempty"`
}

type sectionResponse struct {
	Name     string        `json:"name"`
	Category string        `json:"category"`
	Rows     []rowResponse `json:"rows"`
}

type rowResponse struct {
	Label    string `json:"label"`
	Seats    int    `json:"seats"`
	Category string `json:"category"`
	// FirstSeatID is the id of the row's first seat; the row's seats are
	// FirstSeatID..FirstSeatID+Seats-1.
	FirstSeatID int `json:"firstSeatId"`
}

func (h *handler) createSchedule(w http.ResponseWriter, r *http.Request) error {
	var req createScheduleRequest
	// A stadium's layout is larger than any other body.
	if err := decodeJSONWithin(w, r, &req, scheduleBody); err != nil {
		return err
	}
	title := value(req.Title)
	startsAt, _ := parseDateTime(value(req.StartsAt)) // zero when it does not parse: validate names it
	var (
		draft   reservation.Schedule
		invalid error
	)
	switch {
	case req.Layout != nil && req.Layout.Sections != nil:
		draft, invalid = reservation.NewSectionedSchedule(title, startsAt, req.Layout.sections())
	case req.Layout != nil:
		draft, invalid = reservation.NewLaidOutSchedule(title, startsAt, toRows(req.Layout.Rows))
	default:
		draft, invalid = reservation.NewSchedule(title, startsAt, value(req.SeatCount))
	}
	if err := validate(h.validate, &req, invalid); err != nil {
		return err
	}
	s, err := h.bookings.CreateLaidOutSchedule(r.Context(), draft.Title(), draft.StartsAt(), draft.Layout())
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/schedules/"+strconv.FormatInt(s.ID(), 10))
	return ok(w, http.StatusCreated, toScheduleResponse(s))
}

func toRows(requested []rowRequest) []reservation.Row {
	rows := make([]reservation.Row, len(requested))
	for i, r := range requested {
		rows[i] = reservation.Row{Label: value(r.Label), Seats: value(r.Seats), Category: value(r.Category)}
	}
	return rows
}

func (l *layoutRequest) sections() []reservation.Section {
	sections := make([]reservation.Section, len(l.Sections))
	for i, s := range l.Sections {
		sections[i] = reservation.Section{Name: value(s.Name), Category: value(s.Category), Rows: toRows(s.Rows)}
	}
	return sections
}

func toScheduleResponse(s reservation.Schedule) scheduleResponse {
	layout := s.Layout()
	resp := scheduleResponse{ID: s.ID(), Title: s.Title(), StartsAt: reservation.ReadableStart(s.StartsAt().UTC()), SeatCount: s.SeatCount()}
	all := layout.Rows()
	rowsOf := func(lo, hi int) []rowResponse {
		rows := make([]rowResponse, 0, hi-lo)
		for _, r := range all[lo:hi] {
			rows = append(rows, rowResponse{Label: r.Label, Seats: r.Seats, Category: r.Category, FirstSeatID: layout.FirstSeat(lo + len(rows))})
		}
		return rows
	}
	if !layout.Sectioned() {
		resp.Layout.Rows = rowsOf(0, len(all))
		return resp
	}
	for i, sec := range layout.Sections() {
		lo, hi := layout.SectionRows(i)
		resp.Layout.Sections = append(resp.Layout.Sections, sectionResponse{Name: sec.Name, Category: sec.Category, Rows: rowsOf(lo, hi)})
	}
	return resp
}

type scheduleListResponse struct {
	Schedules []scheduleResponse `json:"schedules"`
	// Next is the `after` of the next page; null on the last one.
	Next *int64 `json:"next"`
}

// listSchedules answers one page of schedules, newest first:
// ?limit=N (1..100, default 20) &after=ID (the previous page's next). A
// parameter sent twice or not a number is passed on as a value the use
// case refuses (limit 0, after -1), which names it in its 422.
func (h *handler) listSchedules(w http.ResponseWriter, r *http.Request) error {
	query := r.URL.Query()
	limit, after := reservation.DefaultSchedulePage, int64(0)
	if v, ok := query["limit"]; ok {
		limit = 0
		if n, err := strconv.Atoi(v[0]); err == nil && len(v) == 1 {
			limit = n
		}
	}
	if v, ok := query["after"]; ok {
		after = -1
		if id, valid := parseID(v[0]); valid && len(v) == 1 {
			after = id
		}
	}
	page, err := h.bookings.Schedules(r.Context(), after, limit)
	if err != nil {
		return err
	}
	resp := scheduleListResponse{Schedules: make([]scheduleResponse, len(page.Schedules))}
	for i, s := range page.Schedules {
		resp.Schedules[i] = toScheduleResponse(s)
	}
	if page.Next != 0 {
		resp.Next = &page.Next
	}
	return ok(w, http.StatusOK, resp)
}

func (h *handler) getSchedule(w http.ResponseWriter, r *http.Request) error {
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		return reservation.ErrScheduleNotFound
	}
	s, err := h.bookings.Schedule(r.Context(), id)
	if err != nil {
		return err
	}
	return ok(w, http.StatusOK, toScheduleResponse(s))
}

// seatMap answers a schedule's seat map in the form ?form= asks for, from
// this instance's image of its seats (no query), gzip-compressed when the
// client prefers it (negotiateEncoding). Its ETag names the image's
// state: a client that has it gets 304, and nothing is rendered.
func (h *handler) seatMap(w http.ResponseWriter, r *http.Request) error {
	id, valid := parseID(chi.URLParam(r, "id"))
	if !valid {
		return reservation.ErrScheduleNotFound
	}
	form, err := seatmap.ParseForm(r.URL.Query()["form"])
	if err != nil {
		return err
	}
	schedule, err := h.bookings.Schedule(r.Context(), id)
	if err != nil {
		return err
	}
	image, err := h.images.Image(r.Context(), schedule)
	if err != nil {
		return err
	}
	hdr := w.Header()
	// Cached copies must be revalidated, which the ETag makes cheap; the
	// answer differs by encoding.
	hdr["Cache-Control"] = noCache
	hdr["Vary"] = varyEncoding
	coding := negotiateEncoding(r.Header.Values("Accept-Encoding"))
	if coding == codingNone {
		return errNotAcceptable
	}
	gzipped := coding == codingGzip
	if _, tag := image.Tag(); etagMatches(r.Header.Get("If-None-Match"), seatmap.ETag(tag, form, gzipped)) {
		hdr["Etag"] = []string{seatmap.ETag(tag, form, gzipped)}
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	rendered := h.maps.Render(image, form, gzipped)
	hdr["Etag"] = []string{seatmap.ETag(rendered.Tag, form, gzipped)}
	if gzipped {
		hdr["Content-Encoding"] = gzipEncoding
	}
	problem.WriteBody(w, contentTypeJSON, http.StatusOK, rendered.Body)
	return nil
}

var (
	varyEncoding = []string{"Accept-Encoding"}
	gzipEncoding = []string{"gzip"}
)

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
