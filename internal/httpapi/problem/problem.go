// Package problem answers every failed request of the HTTP API as an RFC
// 9457 problem with a stable `code` that clients switch on. Error is a
// problem waiting to be written; Write turns any error into one, mapping
// the domain's errors through one table; Scope is the request state a
// problem reads (the request id) and reports (its code, for the request
// log). The handlers and the live seat map both write through it, and
// WriteBody is the one writer of whole answers, problems or not.
package problem

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/waitroom"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Error is a problem with the headers it needs. An *Error given to Write
// is answered as it is.
type Error struct {
	Status     int
	Code       string
	Title      string
	Detail     string
	RetryAfter time.Duration // > 0 sets Retry-After, rounded up to whole seconds
	Fields     []FieldError  // validation_failed: every bad field
	Seats      []SeatReason  // seats_unavailable: every refused seat
	Checks     map[string]string
	Available  *int   // not_enough_seats: how many seats of the category are free
	HoldID     string // seat_held: the caller's own hold that claims the seat
	Queue      string // admission_required: the path of the queue to join

}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// FieldError is one invalid field of a validation_failed problem.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// SeatReason is one seat a hold could not have, in a seats_unavailable
// problem.
type SeatReason struct {
	SeatID int    `json:"seatId"`
	Reason string `json:"reason"`
}

// body is the problem as JSON, with the members clients read.
type body struct {
	Type      string            `json:"type"`
	Title     string            `json:"title"`
	Status    int               `json:"status"`
	Detail    string            `json:"detail"`
	Code      string            `json:"code"`
	Errors    []FieldError      `json:"errors,omitempty"`
	Seats     []SeatReason      `json:"seats,omitempty"`
	RequestID string            `json:"requestId,omitempty"`
	Checks    map[string]string `json:"checks,omitempty"`
	Available *int              `json:"available,omitempty"`
	HoldID    string            `json:"holdId,omitempty"`
	Queue     string            `json:"queue,omitempty"`
}

// unavailableRetryAfter is what a 503 tells clients: long enough for a
// restarted dependency, short enough that nobody gives up.
const unavailableRetryAfter = 2 * time.Second

// The one table that maps domain errors to HTTP. Conflicts stay 409; only
// what is not listed becomes 500.
var errorTable = []struct {
	target error
	Error
}{
	{reservation.ErrSeatLocked, Error{Status: http.StatusConflict, Code: "seat_locked", Title: "Seat is locked",
		Detail: "Another request is booking this seat right now; retry after the time in Retry-After."}},
	{reservation.ErrSeatTaken, Error{Status: http.StatusConflict, Code: "seat_taken", Title: "Seat already reserved",
		Detail: "This seat already has a reservation."}},
	{reservation.ErrScheduleNotFound, Error{Status: http.StatusNotFound, Code: "schedule_not_found", Title: "Schedule not found",
		Detail: "No schedule has this id."}},
	{reservation.ErrSeatNotFound, Error{Status: http.StatusNotFound, Code: "seat_not_found", Title: "Seat not found",
		Detail: "The schedule has no seat with this id."}},
	{reservation.ErrReservationNotFound, Error{Status: http.StatusNotFound, Code: "reservation_not_found", Title: "Reservation not found",
		Detail: "You have no reservation with this id."}},
	{reservation.ErrSeatHeld, Error{Status: http.StatusConflict, Code: "seat_held", Title: "Seat is held",
		Detail: "Another customer holds this seat while they check out; retry after the time in Retry-After."}},
	{reservation.ErrSeatsUnavailable, Error{Status: http.StatusConflict, Code: "seats_unavailable", Title: "Seats unavailable",
		Detail: "Some of the seats are locked, held or taken; seats lists each one. Nothing was held."}},
	{reservation.ErrHoldNotFound, Error{Status: http.StatusNotFound, Code: "hold_not_found", Title: "Hold not found",
		Detail: "You have no hold with this id."}},
	{reservation.ErrHoldExpired, Error{Status: http.StatusConflict, Code: "hold_expired", Title: "Hold expired",
		Detail: "The hold ran out before it was confirmed; its seats are free again."}},
	{reservation.ErrHoldReleased, Error{Status: http.StatusConflict, Code: "hold_released", Title: "Hold released",
		Detail: "The hold was released; its seats are free again."}},
	{reservation.ErrHoldConfirmed, Error{Status: http.StatusConflict, Code: "hold_confirmed", Title: "Hold confirmed",
		Detail: "The hold was confirmed; cancel its reservations instead."}},
	{reservation.ErrNotEnoughSeats, Error{Status: http.StatusConflict, Code: "not_enough_seats", Title: "Not enough seats",
		Detail: "No choice of seats gives the quantity asked for (together, of the category) right now; available says how many seats of the category are free. Nothing was held."}},
	{reservation.ErrSeatsContended, Error{Status: http.StatusConflict, Code: "seats_contended", Title: "Seats contended",
		Detail:     "Other buyers took each choice of seats first; seats remain, retry after the time in Retry-After. Nothing was held.",
		RetryAfter: time.Second}},
	{reservation.ErrHoldLifetimeExceeded, Error{Status: http.StatusConflict, Code: "hold_lifetime_exceeded", Title: "Hold lifetime exceeded",
		Detail: "The hold already lives as long after it was made as a hold may; it cannot be extended again. Confirm it before it expires."}},
	{reservation.ErrTooManyHolds, Error{Status: http.StatusConflict, Code: "too_many_holds", Title: "Too many holds",
		Detail: "You have as many live holds as allowed; confirm or release one first."}},
	{waitroom.ErrQueueNotFound, Error{Status: http.StatusNotFound, Code: "queue_not_found", Title: "Queue not found",
		Detail: "This schedule has no queue: its sale is open to everyone."}},
	{waitroom.ErrTicketNotFound, Error{Status: http.StatusNotFound, Code: "ticket_not_found", Title: "Ticket not found",
		Detail: "You have no ticket with this id in a queue."}},
	{waitroom.ErrAdmissionRequired, Error{Status: http.StatusForbidden, Code: "admission_required", Title: "Admission required",
		Detail: "This schedule's sale has a queue: join it, and send the admission it gives in the Admission header."}},
	{waitroom.ErrAdmissionInvalid, Error{Status: http.StatusForbidden, Code: "admission_invalid", Title: "Admission invalid",
		Detail: "The admission is expired, given up, of another user or schedule, or not one this service signed."}},
	{waitroom.ErrNoStore, Error{Status: http.StatusNotImplemented, Code: "queue_unsupported", Title: "Queues unsupported",
		Detail: "This deployment runs without Redis (REDIS_URL), which the waiting room needs."}},
	{webhook.ErrEndpointNotFound, Error{Status: http.StatusNotFound, Code: "webhook_not_found", Title: "Webhook not found",
		Detail: "No webhook endpoint has this id."}},
	{webhook.ErrDeliveryNotFound, Error{Status: http.StatusNotFound, Code: "delivery_not_found", Title: "Delivery not found",
		Detail: "The webhook endpoint has no delivery of an event with this id."}},
	{reservation.ErrUnavailable, Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Title: "Service unavailable",
		Detail: "A dependency of the service cannot be reached right now; retry later.", RetryAfter: unavailableRetryAfter}},
}

// Problems of the HTTP edge itself, shared by its packages.
var (
	Internal = &Error{Status: http.StatusInternalServerError, Code: "internal", Title: "Internal error",
		Detail: "Something unexpected went wrong; the request id identifies it in the logs."}
	NotFound = &Error{Status: http.StatusNotFound, Code: "not_found", Title: "Not found",
		Detail: "No such resource."}
	// Unavailable is a dependency that cannot answer, named in Detail.
	Unavailable = &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Title: "Service unavailable",
		Detail: "A dependency cannot be reached; see checks.", RetryAfter: unavailableRetryAfter}
	// UnreadableBody is a body whose reading failed: cut short before its
	// Content-Length, or a broken chunked encoding.
	UnreadableBody = Malformed("The body could not be read to its end.")
)

// Malformed is 400 malformed_json with detail saying what is wrong.
func Malformed(detail string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "malformed_json", Title: "Malformed JSON", Detail: detail}
}

// ValidationFailed is 422 naming every bad field.
func ValidationFailed(fields []FieldError) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "validation_failed", Title: "Validation failed",
		Detail: "One or more fields are invalid.", Fields: fields}
}

// AtLeastASecond keeps Retry-After at one second or more even when the
// holder's time was unknown or almost over.
func AtLeastASecond(d time.Duration) time.Duration { return max(d, time.Second) }

// The status (nginx's) and code of a request whose client disconnected
// before its answer: only the request log and the metrics show it.
const (
	StatusClientClosedRequest = 499
	CodeClientClosedRequest   = "client_closed_request"
)

// clientGone reports whether the request's client disconnected (the server
// cancels the request's context then; the request timeout ends it with
// DeadlineExceeded instead).
func clientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

// Write answers with the problem for err: an *Error as it is, a domain
// error through the table, anything else as a generic 500. The causes of
// 5xx answers are logged with the request id; their text never reaches
// the client. A request whose client went away gets 499 and no log line:
// whatever failed, failed because nobody waits for the answer any more.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	scope := ScopeFrom(r.Context())
	e, ok := err.(*Error)
	if !ok {
		if clientGone(r) {
			scope.Code = CodeClientClosedRequest
			w.WriteHeader(StatusClientClosedRequest)
			return
		}
		e = fromError(err)
		if e.Status >= 500 {
			scope.logger().ErrorContext(r.Context(), "request failed",
				slog.String("request_id", scope.ID), slog.Int("status", e.Status), slog.Any("error", err))
		}
	}
	scope.Code = e.Code
	h := w.Header()
	if e.RetryAfter > 0 {
		h["Retry-After"] = []string{strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds())))}
	}
	buf := bodyBuffers.Get().(*[]byte)
	*buf = e.appendJSON((*buf)[:0], scope.ID)
	h["Cache-Control"] = NoStore // whatever the handler had set for a success
	WriteBody(w, contentTypeProblem, e.Status, *buf)
	if cap(*buf) <= maxPooledBody {
		bodyBuffers.Put(buf)
	}
}

// WriteBody writes a whole answer with its length, so that it goes out in
// one piece: every answer of the API but the stream's is written by it.
// Answers are no-store (they name a user, or change with every booking)
// unless the handler set Cache-Control first: what a client may keep and
// revalidate (the seat map with its ETag, the page, the document) says
// no-cache.
func WriteBody(w http.ResponseWriter, contentType []string, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	if _, set := h["Cache-Control"]; !set {
		h["Cache-Control"] = NoStore
	}
	h["X-Content-Type-Options"] = NoSniff
	h["Content-Length"] = contentLength(len(body))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Header values shared by every response: assigning them directly skips
// canonicalising the key and allocating a slice per response (net/http
// only reads them).
var (
	contentTypeProblem = []string{"application/problem+json"}
	NoStore            = []string{"no-store"}
	NoSniff            = []string{"nosniff"}
)

// fromError maps err through errorTable; anything unknown is internal.
func fromError(err error) *Error {
	if fields := InvalidFields(err); fields != nil {
		return ValidationFailed(fields)
	}
	for i := range errorTable {
		row := &errorTable[i]
		if !errors.Is(err, row.target) {
			continue
		}
		// errors.AsType, not errors.As: the hot seat's seat_taken passes
		// here on every request, and As's targets would be allocated.
		if notEnough, ok := errors.AsType[*reservation.NotEnoughSeatsError](err); ok {
			e := row.Error
			e.Available = &notEnough.Available
			return &e
		}
		if seat, ok := errors.AsType[*reservation.UnavailableSeat](err); ok {
			e := row.Error
			// Retry-After only when waiting can help: not for a taken seat.
			if seat.Reason != reservation.ReasonTaken {
				e.RetryAfter = AtLeastASecond(seat.RetryAfter)
			}
			if seat.Reason == reservation.ReasonHeld && seat.OwnHold != uuid.Nil {
				ownHold(&e, seat.OwnHold)
			}
			return &e
		}
		if refused, ok := errors.AsType[*reservation.SeatsUnavailableError](err); ok {
			e := row.Error
			e.Seats = make([]SeatReason, len(refused.Seats))
			for i, s := range refused.Seats {
				e.Seats[i] = SeatReason{SeatID: s.SeatID, Reason: string(s.Reason)}
			}
			if wait := refused.RetryAfter(); wait > 0 {
				e.RetryAfter = AtLeastASecond(wait)
			}
			return &e
		}
		return &row.Error // as listed; never written to
	}
	return Internal
}

// ownHold makes e, a seat_held problem, the one its own holder gets: the
// hold's id in holdId, and a detail saying to confirm it.
func ownHold(e *Error, hold uuid.UUID) {
	e.HoldID = hold.String()
	e.Detail = "This seat is held by your own hold " + e.HoldID + "; to book it, confirm that hold (POST /holds/" +
		e.HoldID + "/confirm), which books every seat of the hold. Retry-After is the time the hold has left."
}

// InvalidFields lists every *reservation.InvalidError in err's tree, in
// order.
func InvalidFields(err error) []FieldError {
	switch e := err.(type) {
	case *reservation.InvalidError:
		return []FieldError{{Field: e.Field, Detail: e.Detail}}
	case interface{ Unwrap() error }:
		return InvalidFields(e.Unwrap())
	case interface{ Unwrap() []error }:
		var fields []FieldError
		for _, err := range e.Unwrap() {
			fields = append(fields, InvalidFields(err)...)
		}
		return fields
	}
	return nil
}
