package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxBody caps what we read of any response; the API's bodies are tiny and a
// misbehaving server must not make the hammer buffer without bound.
const maxBody = 1 << 20

// api is the one place that talks HTTP to the service: setup calls,
// reservations and seat-map reads all go through send.
type api struct {
	hc      *http.Client
	timeout time.Duration
}

// newAPI returns a client whose idle pool holds a connection per worker and
// target, so the timed phase reuses connections instead of measuring TCP
// handshakes.
func newAPI(workers, targets int, timeout time.Duration) *api {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = workers * targets
	tr.MaxIdleConnsPerHost = workers
	tr.MaxConnsPerHost = workers // a worker has one request in flight: never more connections
	return &api{hc: &http.Client{Transport: tr}, timeout: timeout}
}

func (a *api) close() { a.hc.CloseIdleConnections() }

// problem is the part of an RFC 9457 body the hammer looks at.
type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
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

// send makes one request with its own deadline and reads the whole (capped)
// body, so the connection goes back to the idle pool. latency covers
// sending the request and reading the body.
func (a *api) send(ctx context.Context, method, url, token string, body []byte) (status int, data []byte, latency time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	latency = time.Since(start)
	if err != nil {
		return 0, nil, latency, fmt.Errorf("read body: %w", err)
	}
	return resp.StatusCode, data, latency, nil
}

// call sends in as JSON (nil: no body) and decodes the answer into out when
// the status is want; any other status is an *apiError.
func (a *api) call(ctx context.Context, op, method, url, token string, in, out any, want int) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	status, data, _, err := a.send(ctx, method, url, token, body)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if status != want {
		e := &apiError{Op: op, Status: status}
		_ = json.Unmarshal(data, &e.Problem) // a non-problem body still yields the status
		return e
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decode body: %w", op, err)
	}
	return nil
}

type scheduleIn struct {
	Title     string `json:"title"`
	StartsAt  string `json:"startsAt"`
	SeatCount int    `json:"seatCount"`
}

type scheduleOut struct {
	ID        int64 `json:"id"`
	SeatCount int   `json:"seatCount"`
}

// createSchedule creates a schedule a day ahead with seats seats and returns
// its id.
func (a *api) createSchedule(ctx context.Context, target, adminToken, title string, seats int) (int64, error) {
	in := scheduleIn{Title: title, StartsAt: time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339), SeatCount: seats}
	var out scheduleOut
	if err := a.call(ctx, "create schedule", http.MethodPost, target+"/schedules", adminToken, in, &out, http.StatusCreated); err != nil {
		return 0, err
	}
	if out.ID <= 0 || out.SeatCount != seats {
		return 0, fmt.Errorf("create schedule: answer has id %d and seatCount %d, want a positive id and %d", out.ID, out.SeatCount, seats)
	}
	return out.ID, nil
}

type seatMapOut struct {
	ScheduleID int64 `json:"scheduleId"`
	Seats      []struct {
		SeatID int    `json:"seatId"`
		Status string `json:"status"`
	} `json:"seats"`
}

// seatMap returns the status of every seat of a schedule by seat id.
func (a *api) seatMap(ctx context.Context, target string, scheduleID int64) (map[int]string, error) {
	var out seatMapOut
	url := target + "/schedules/" + strconv.FormatInt(scheduleID, 10) + "/seats"
	if err := a.call(ctx, "get seat map", http.MethodGet, url, "", nil, &out, http.StatusOK); err != nil {
		return nil, err
	}
	if out.ScheduleID != scheduleID {
		return nil, fmt.Errorf("get seat map: answer is for schedule %d, want %d", out.ScheduleID, scheduleID)
	}
	statuses := make(map[int]string, len(out.Seats))
	for _, s := range out.Seats {
		statuses[s.SeatID] = s.Status
	}
	return statuses, nil
}

type reservationOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatID     int    `json:"seatId"`
	UserID     string `json:"userId"`
}

// reserve sends one POST /reservations for seat as u and classifies the
// answer.
func (a *api) reserve(ctx context.Context, target string, u user, seat seatRef) outcome {
	o := outcome{Seat: seat, Sent: true}
	body := fmt.Appendf(nil, `{"scheduleId":%d,"seatId":%d}`, seat.Schedule, seat.Seat)
	status, data, latency, err := a.send(ctx, http.MethodPost, target+"/reservations", u.token, body)
	o.Latency = latency
	if err != nil {
		o.Canceled = ctx.Err() != nil
		o.Err = err.Error()
		return o
	}
	o.Status = status
	if status == http.StatusOK {
		var r reservationOut
		err := json.Unmarshal(data, &r)
		o.BadSuccess = err != nil || r.ID == "" || r.ScheduleID != seat.Schedule || r.SeatID != seat.Seat || r.UserID != u.id
		return o
	}
	var p problem
	if json.Unmarshal(data, &p) == nil {
		o.Code = internCode(p.Code)
	}
	return o
}

// internCode returns the usual problem codes as constants, so that a run of
// a million requests does not keep a million copies of "seat_taken".
func internCode(code string) string {
	for _, known := range []string{"seat_taken", "seat_locked", "unavailable", "internal"} {
		if code == known {
			return known
		}
	}
	return code
}
