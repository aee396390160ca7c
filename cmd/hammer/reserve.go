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

// outcome is what one reservation request produced.
type outcome struct {
	Seat       int
	Sent       bool
	Canceled   bool   // the run was interrupted while this request was in flight
	Status     int    // 0: no HTTP answer
	Code       string // the problem's code, if any
	Err        string // transport error text
	BadSuccess bool   // a 200 whose body names another schedule, seat or user
	Latency    time.Duration
}

// Histogram keys with a meaning of their own.
const (
	keyOK             = "200"
	keyBadSuccess     = "200 unexpected body"
	keySeatLocked     = "409 seat_locked"
	keySeatTaken      = "409 seat_taken"
	keyTransportError = "transport error"
	keyCanceled       = "canceled"
	keyNotSent        = "not sent"
)

// key names the outcome's bucket in the status histogram.
func (o outcome) key() string {
	switch {
	case !o.Sent:
		return keyNotSent
	case o.Canceled:
		return keyCanceled
	case o.Status == 0:
		return keyTransportError
	case o.Status == http.StatusOK && o.BadSuccess:
		return keyBadSuccess
	case o.Code != "":
		return strconv.Itoa(o.Status) + " " + o.Code
	default:
		return strconv.Itoa(o.Status)
	}
}

type reservationOut struct {
	ID         string `json:"id"`
	ScheduleID int64  `json:"scheduleId"`
	SeatID     int    `json:"seatId"`
	UserID     string `json:"userId"`
}

// reserve sends one POST /reservations as user and classifies the answer.
// The latency covers sending the request and reading the whole body.
func reserve(ctx context.Context, hc *http.Client, timeout time.Duration, target, token, user string, scheduleID int64, seat int) outcome {
	o := outcome{Seat: seat, Sent: true}
	body := fmt.Appendf(nil, `{"scheduleId":%d,"seatId":%d}`, scheduleID, seat)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, target+"/reservations", bytes.NewReader(body))
	if err != nil {
		o.Err = err.Error()
		return o
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)

	start := time.Now()
	data, status, err := roundTrip(hc, req)
	o.Latency = time.Since(start)
	if err != nil {
		o.Canceled = ctx.Err() != nil
		o.Err = err.Error()
		return o
	}
	o.Status = status
	if status == http.StatusOK {
		var r reservationOut
		err := json.Unmarshal(data, &r)
		o.BadSuccess = err != nil || r.ID == "" || r.ScheduleID != scheduleID || r.SeatID != seat || r.UserID != user
		return o
	}
	var p problem
	if json.Unmarshal(data, &p) == nil {
		o.Code = p.Code
	}
	return o
}

// roundTrip sends req and reads the whole (capped) body, so the connection
// goes back to the idle pool for the next request.
func roundTrip(hc *http.Client, req *http.Request) ([]byte, int, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, 0, fmt.Errorf("read body: %w", err)
	}
	return data, resp.StatusCode, nil
}
