package main

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// outcome is what one reservation request produced.
type outcome struct {
	Seat       seatRef
	Sent       bool
	Canceled   bool   // the run was interrupted while this request was in flight
	Status     int    // 0: no HTTP answer
	Code       string // the problem's code, if any
	Err        string // transport error text
	BadSuccess bool   // a 200 whose body names another schedule, seat or user
	// Reservation is a 200's reservation id: a user who asks again for a
	// seat that is already theirs is answered with the same one.
	Reservation string
	Latency     time.Duration
	At          time.Time // when the answer arrived
	// User is the index of the user who sent it (fire's users).
	User int
	// RetryAfter is a refusal's Retry-After (0 when absent).
	RetryAfter time.Duration
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

// keyUnavailable is the service saying that a dependency cannot answer
// (its database while it fails over): -allow-unavailable lets it pass.
const keyUnavailable = "503 unavailable"

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
	case o.Status == http.StatusConflict && o.Code == "seat_taken":
		return keySeatTaken
	case o.Status == http.StatusConflict && o.Code == "seat_locked":
		return keySeatLocked
	case o.Code != "":
		return strconv.Itoa(o.Status) + " " + o.Code
	default:
		return strconv.Itoa(o.Status)
	}
}

// answered records the answer to a request sent as ctx allowed (res, or
// err when there is none): when it came, its latency, and its status or
// why there is none. It reports whether there is one to read.
func (o *outcome) answered(ctx context.Context, res response, err error) bool {
	o.Latency, o.At = res.Latency, time.Now()
	if err != nil {
		o.Canceled = ctx.Err() != nil
		o.Err = err.Error()
		return false
	}
	o.Status = res.Status
	return true
}
