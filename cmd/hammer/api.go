package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// problem is the part of an RFC 9457 body the hammer looks at.
type problem struct {
	Detail string `json:"detail"`
	Code   string `json:"code"`
}

// apiError is a non-success answer during setup or verification.
type apiError struct {
	Op      string
	Status  int
	Problem problem
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Problem.Code != "" {
		msg += " " + e.Problem.Code
	}
	if e.Problem.Detail != "" {
		msg += ": " + e.Problem.Detail
	}
	return msg
}

// call sends in as JSON (nil: no body) and decodes the answer into out
// (nil: not decoded, as for a 204) when the status is want; any other
// status is an *apiError.
func (a *api) call(ctx context.Context, op, method, url, token string, in, out any, want int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	data, err := a.fetch(ctx, op, request{method: method, url: url, token: token, body: body}, want)
	if err != nil || out == nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decode body: %w", op, err)
	}
	return nil
}

// fetch sends req and returns the body of an answer of status want; any
// other status is an *apiError.
func (a *api) fetch(ctx context.Context, op string, req request, want int) ([]byte, error) {
	res, err := a.do(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if res.Status != want {
		e := &apiError{Op: op, Status: res.Status}
		_ = json.Unmarshal(res.Body, &e.Problem) // a non-problem body still yields the status
		return nil, e
	}
	return res.Body, nil
}

// scheduleIn is POST /schedules's body: a count of seats, or a layout.
type scheduleIn struct {
	Title     string    `json:"title"`
	StartsAt  string    `json:"startsAt"`
	SeatCount int       `json:"seatCount,omitempty"`
	Layout    *layoutIn `json:"layout,omitempty"`
}

type scheduleOut struct {
	ID        int64 `json:"id"`
	SeatCount int   `json:"seatCount"`
}

// postSchedule creates the schedule in describes, a day ahead, and
// decodes the answer into out.
func (a *api) postSchedule(ctx context.Context, target, adminToken string, in scheduleIn, out any) error {
	in.StartsAt = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	return a.call(ctx, "create schedule", http.MethodPost, target+"/schedules", adminToken, in, out, http.StatusCreated)
}

// createSchedule creates a schedule with seats seats and returns its id.
func (a *api) createSchedule(ctx context.Context, target, adminToken, title string, seats int) (int64, error) {
	var out scheduleOut
	if err := a.postSchedule(ctx, target, adminToken, scheduleIn{Title: title, SeatCount: seats}, &out); err != nil {
		return 0, err
	}
	if out.ID <= 0 || out.SeatCount != seats {
		return 0, fmt.Errorf("create schedule: answer has id %d and seatCount %d, want a positive id and %d", out.ID, out.SeatCount, seats)
	}
	return out.ID, nil
}

// seatMap returns the status of every seat of a schedule by seat id,
// reading the compact form (a server that does not know it answers the
// full form, which is read as well).
func (a *api) seatMap(ctx context.Context, target string, scheduleID int64) (map[int]string, error) {
	data, err := a.fetch(ctx, "get seat map", request{method: http.MethodGet, url: seatsURL(target, scheduleID, formCompact)}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	m, err := parseSeatMap(data)
	if err != nil {
		return nil, fmt.Errorf("get seat map: %w", err)
	}
	if m.ScheduleID != scheduleID {
		return nil, fmt.Errorf("get seat map: answer is for schedule %d, want %d", m.ScheduleID, scheduleID)
	}
	return m.Statuses, nil
}

type reservationOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatID     int    `json:"seatId"`
	UserID     string `json:"userId"`
	Status     string `json:"status"` // active or cancelled (GET /reservations/{id})
}

// reserve sends one POST /reservations for seat as u and classifies the
// answer.
func (a *api) reserve(ctx context.Context, target string, u user, seat seatRef) outcome {
	o := outcome{Seat: seat, Sent: true}
	body := fmt.Appendf(nil, `{"scheduleId":%d,"seatId":%d}`, seat.Schedule, seat.Seat)
	res, err := a.do(ctx, request{method: http.MethodPost, url: target + "/reservations", token: u.token, body: body, read: readRetryAfter})
	if !o.answered(ctx, res, err) {
		return o
	}
	if res.Status == http.StatusOK {
		var r reservationOut
		err := json.Unmarshal(res.Body, &r)
		o.BadSuccess = err != nil || r.ID == "" || r.ScheduleID != seat.Schedule || r.SeatID != seat.Seat || r.UserID != u.id
		o.Reservation = r.ID
		return o
	}
	o.Code = problemCode(res.Body)
	o.RetryAfter = retryAfterOf(res.Header[0])
	return o
}

// readRetryAfter reads a refusal's Retry-After.
var readRetryAfter = []string{retryAfterHeader}

// retryAfterOf is a Retry-After of seconds as a duration; 0 when absent
// or not a number.
func retryAfterOf(v string) time.Duration {
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}

// reservation reads one of u's reservations by its id.
func (a *api) reservation(ctx context.Context, target string, u user, id string) (reservationOut, error) {
	var out reservationOut
	err := a.call(ctx, "get reservation", http.MethodGet, target+"/reservations/"+id, u.token, nil, &out, http.StatusOK)
	return out, err
}

// problemCode is the "code" member of a problem body. The usual bodies are
// answered by a byte search (the hammer reads thousands a second); anything
// else goes through the JSON decoder.
func problemCode(body []byte) string {
	for i, member := range knownMembers {
		if bytes.Contains(body, member) {
			return knownCodes[i]
		}
	}
	var p problem
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return p.Code
}

// knownCodes are the problem codes a hammered seat answers; knownMembers
// the same as they appear in a body.
var (
	knownCodes   = []string{"seat_taken", "seat_locked", "unavailable", "internal"}
	knownMembers = func() (members [][]byte) {
		for _, c := range knownCodes {
			members = append(members, []byte(`"code":"`+c+`"`))
		}
		return members
	}()
)

// createVenue creates a schedule laid out as layout says and returns it
// as the service answered, rows numbered.
func (a *api) createVenue(ctx context.Context, target, adminToken, title string, layout layoutIn) (venue, error) {
	var out venue
	if err := a.postSchedule(ctx, target, adminToken, scheduleIn{Title: title, Layout: &layout}, &out); err != nil {
		return venue{}, err
	}
	if err := out.check(&layout); err != nil {
		return venue{}, fmt.Errorf("create schedule: %w", err)
	}
	return out, nil
}

// venue reads a schedule and its layout.
func (a *api) venue(ctx context.Context, target string, scheduleID int64) (venue, error) {
	var out venue
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10)
	if err := a.call(ctx, "get schedule", http.MethodGet, url, "", nil, &out, http.StatusOK); err != nil {
		return venue{}, err
	}
	if out.ID != scheduleID {
		return venue{}, fmt.Errorf("get schedule: answer is for schedule %d, want %d", out.ID, scheduleID)
	}
	if err := out.check(nil); err != nil {
		return venue{}, fmt.Errorf("get schedule: %w", err)
	}
	return out, nil
}

// holdOut is the part of a 201 hold the hammer checks.
type holdOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatIDs    []int  `json:"seatIds"`
	UserID     string `json:"userId"`
	Status     string `json:"status"`
}

// holdOutcome is what one POST /holds produced: outcome's status, code,
// error and latency, and the hold's seats.
type holdOutcome struct {
	outcome
	Quantity int
	Asked    []int // explicit seats: the seats asked for
	Seats    []int // a 201's seats, ascending
	Hold     string
	// Attempts is a best-available 201's Hold-Attempts (0 when absent or
	// not a number).
	Attempts int
	// Available is not_enough_seats's count of free seats (-1 without).
	Available int
}

// Histogram keys of holds.
const (
	keyHeld         = "201"
	keyBadHold      = "201 unexpected body"
	keyNotEnough    = "409 not_enough_seats"
	keyContended    = "409 seats_contended"
	keyRateLimited  = "429 rate_limited"
	keyTooManyHolds = "409 too_many_holds"
	codeNotEnough   = "not_enough_seats"
)

func (o holdOutcome) key() string {
	if o.Sent && !o.Canceled && o.Status == http.StatusCreated && o.BadSuccess {
		return keyBadHold
	}
	return o.outcome.key()
}

// granted reports whether the service answered 201: the seats it names
// are held, even when the body is not as it should be (keyBadHold).
func (o holdOutcome) granted() bool {
	return o.Sent && !o.Canceled && o.Status == http.StatusCreated
}

// holdBest sends one best-available POST /holds as u, with extra request
// headers (name, value pairs).
func (a *api) holdBest(ctx context.Context, target string, u user, schedule int64, quantity int, category string, adjacent bool, extra []string) holdOutcome {
	body := fmt.Appendf(nil, `{"scheduleId":%d,"quantity":%d`, schedule, quantity)
	if category != "" {
		body = fmt.Appendf(body, `,"category":%q`, category)
	}
	if !adjacent {
		body = append(body, `,"adjacent":false`...)
	}
	body = append(body, '}')
	o := a.hold(ctx, target, u, schedule, body, extra)
	o.Quantity = quantity
	if o.Status == http.StatusCreated {
		o.BadSuccess = o.BadSuccess || len(o.Seats) != quantity || o.Attempts < 1
	}
	return o
}

// holdSeats sends one POST /holds for seats as u.
func (a *api) holdSeats(ctx context.Context, target string, u user, schedule int64, seats []int) holdOutcome {
	body, _ := json.Marshal(struct {
		ScheduleID int64 `json:"scheduleId"`
		SeatIDs    []int `json:"seatIds"`
	}{schedule, seats}) // ints do not fail to marshal
	o := a.hold(ctx, target, u, schedule, body, nil)
	o.Quantity, o.Asked = len(seats), seats
	if o.Status == http.StatusCreated {
		o.BadSuccess = o.BadSuccess || !slices.Equal(o.Seats, seats)
	}
	return o
}

// hold sends one POST /holds with extra request headers and classifies
// the answer; a 201 whose body is no live hold of schedule for u, seats
// ascending, is a BadSuccess.
func (a *api) hold(ctx context.Context, target string, u user, schedule int64, body []byte, extra []string) holdOutcome {
	o := holdOutcome{outcome: outcome{Seat: seatRef{Schedule: schedule}, Sent: true}, Available: -1}
	res, err := a.do(ctx, request{method: http.MethodPost, url: target + "/holds", token: u.token, body: body, header: extra, read: readHoldAttempts})
	if !o.answered(ctx, res, err) {
		return o
	}
	if res.Status == http.StatusCreated {
		var h holdOut
		err := json.Unmarshal(res.Body, &h)
		o.Seats, o.Hold = h.SeatIDs, h.ID
		o.Attempts, _ = strconv.Atoi(res.Header[0])
		o.BadSuccess = err != nil || h.ID == "" || h.ScheduleID != schedule || h.UserID != u.id || h.Status != "active" ||
			len(h.SeatIDs) == 0 || !ascending(h.SeatIDs)
		return o
	}
	var p struct {
		Code      string `json:"code"`
		Available *int   `json:"available"`
	}
	if json.Unmarshal(res.Body, &p) == nil {
		o.Code = p.Code
		if p.Available != nil {
			o.Available = *p.Available
		}
	}
	return o
}

// holdAttemptsHeader says how many choices a best-available hold tried.
const holdAttemptsHeader = "Hold-Attempts"

var readHoldAttempts = []string{holdAttemptsHeader}

// ascending reports whether seats rise strictly: sorted, none repeated.
func ascending(seats []int) bool {
	for i := 1; i < len(seats); i++ {
		if seats[i] <= seats[i-1] {
			return false
		}
	}
	return true
}
