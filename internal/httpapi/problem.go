package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/seatlock/seatlock/internal/reservation"
)

// problem is an RFC 9457 problem details body with the stable `code`
// extension that clients switch on.
type problem struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Detail    string       `json:"detail"`
	Code      string       `json:"code"`
	Errors    []fieldError `json:"errors,omitempty"`
	Seats     []seatReason `json:"seats,omitempty"`
	RequestID string       `json:"requestId,omitempty"`
}

// seatReason is one seat a hold could not have, in a seats_unavailable
// problem.
type seatReason struct {
	SeatID int    `json:"seatId"`
	Reason string `json:"reason"`
}

type fieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// apiError is a problem waiting to be written, with the headers it needs.
type apiError struct {
	status     int
	code       string
	title      string
	detail     string
	retryAfter time.Duration // > 0 sets Retry-After
	fields     []fieldError
	seats      []seatReason
}

// unavailableRetryAfter is what a 503 tells clients: long enough for a
// restarted dependency, short enough that nobody gives up.
const unavailableRetryAfter = 2 * time.Second

// The one table that maps domain errors to HTTP. Conflicts stay 409; only
// what is not listed becomes 500.
var errorTable = []struct {
	target error
	apiError
}{
	{reservation.ErrSeatLocked, apiError{status: http.StatusConflict, code: "seat_locked", title: "Seat is locked",
		detail: "Another request is booking this seat right now; retry after the time in Retry-After."}},
	{reservation.ErrSeatTaken, apiError{status: http.StatusConflict, code: "seat_taken", title: "Seat already reserved",
		detail: "This seat already has a reservation."}},
	{reservation.ErrScheduleNotFound, apiError{status: http.StatusNotFound, code: "schedule_not_found", title: "Schedule not found",
		detail: "No schedule has this id."}},
	{reservation.ErrSeatNotFound, apiError{status: http.StatusNotFound, code: "seat_not_found", title: "Seat not found",
		detail: "The schedule has no seat with this id."}},
	{reservation.ErrReservationNotFound, apiError{status: http.StatusNotFound, code: "reservation_not_found", title: "Reservation not found",
		detail: "You have no reservation with this id."}},
	{reservation.ErrSeatHeld, apiError{status: http.StatusConflict, code: "seat_held", title: "Seat is held",
		detail: "Another customer holds this seat while they check out; retry after the time in Retry-After."}},
	{reservation.ErrSeatsUnavailable, apiError{status: http.StatusConflict, code: "seats_unavailable", title: "Seats unavailable",
		detail: "Some of the seats are locked, held or taken; seats lists each one. Nothing was held."}},
	{reservation.ErrHoldNotFound, apiError{status: http.StatusNotFound, code: "hold_not_found", title: "Hold not found",
		detail: "You have no hold with this id."}},
	{reservation.ErrHoldExpired, apiError{status: http.StatusConflict, code: "hold_expired", title: "Hold expired",
		detail: "The hold ran out before it was confirmed; its seats are free again."}},
	{reservation.ErrHoldReleased, apiError{status: http.StatusConflict, code: "hold_released", title: "Hold released",
		detail: "The hold was released; its seats are free again."}},
	{reservation.ErrHoldConfirmed, apiError{status: http.StatusConflict, code: "hold_confirmed", title: "Hold confirmed",
		detail: "The hold was confirmed; cancel its reservations instead."}},
	{reservation.ErrTooManyHolds, apiError{status: http.StatusConflict, code: "too_many_holds", title: "Too many holds",
		detail: "You have as many live holds as allowed; confirm or release one first."}},
	{reservation.ErrUnavailable, apiError{status: http.StatusServiceUnavailable, code: "unavailable", title: "Service unavailable",
		detail: "A dependency of the service cannot be reached right now; retry later.", retryAfter: unavailableRetryAfter}},
}

var (
	errNotReady = apiError{status: http.StatusServiceUnavailable, code: "unavailable", title: "Service unavailable",
		detail: "A dependency cannot be reached; see checks.", retryAfter: unavailableRetryAfter}
	errInternal = apiError{status: http.StatusInternalServerError, code: "internal", title: "Internal error",
		detail: "Something unexpected went wrong; the request id identifies it in the logs."}
	errUnauthorized = apiError{status: http.StatusUnauthorized, code: "unauthorized", title: "Unauthorized",
		detail: "A bearer token is required: send Authorization: Bearer <token>."}
	errForbidden = apiError{status: http.StatusForbidden, code: "forbidden", title: "Forbidden",
		detail: "Your role does not allow this."}
	errNotFound = apiError{status: http.StatusNotFound, code: "not_found", title: "Not found",
		detail: "No such resource."}
	errMethodNotAllowed = apiError{status: http.StatusMethodNotAllowed, code: "method_not_allowed", title: "Method not allowed",
		detail: "This resource does not support the method."}
)

// fromError maps err through errorTable; anything unknown is internal.
func fromError(err error) (apiError, bool) {
	if fields := invalidFields(err); fields != nil {
		return validationFailed(fields), true
	}
	for _, row := range errorTable {
		if errors.Is(err, row.target) {
			e := row.apiError
			var (
				seat    *reservation.UnavailableSeat
				refused *reservation.SeatsUnavailableError
			)
			switch {
			case errors.As(err, &seat):
				// Retry-After only when waiting can help: not for a taken seat.
				if seat.Reason != reservation.ReasonTaken {
					e.retryAfter = atLeastASecond(seat.RetryAfter)
				}
			case errors.As(err, &refused):
				e.seats = make([]seatReason, len(refused.Seats))
				for i, s := range refused.Seats {
					e.seats[i] = seatReason{SeatID: s.SeatID, Reason: string(s.Reason)}
				}
				if wait := refused.RetryAfter(); wait > 0 {
					e.retryAfter = atLeastASecond(wait)
				}
			}
			return e, true
		}
	}
	return errInternal, false
}

// atLeastASecond keeps Retry-After at one second or more even when the
// holder's time was unknown or almost over.
func atLeastASecond(d time.Duration) time.Duration { return max(d, time.Second) }

func validationFailed(fields []fieldError) apiError {
	return apiError{status: http.StatusUnprocessableEntity, code: "validation_failed", title: "Validation failed",
		detail: "One or more fields are invalid.", fields: fields}
}

// statusClientClosedRequest is the status (nginx's) of a request whose
// client disconnected before its answer: only the request log and the
// metrics show it.
const (
	statusClientClosedRequest = 499
	codeClientClosedRequest   = "client_closed_request"
)

// clientGone reports whether the request's client disconnected (the server
// cancels the request's context then; the request timeout ends it with
// DeadlineExceeded instead).
func clientGone(r *http.Request) bool { return errors.Is(r.Context().Err(), context.Canceled) }

// writeError answers with the problem for err. 5xx causes are logged with
// the request id; their text never reaches the client.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if clientGone(r) {
		// Whatever failed, it failed because nobody waits for the answer
		// any more: not the service's error, and nobody to tell.
		scopeFrom(r.Context()).code = codeClientClosedRequest
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	e, known := fromError(err)
	if !known || e.status >= 500 {
		log.ErrorContext(r.Context(), "request failed",
			slog.String("request_id", requestIDFrom(r.Context())), slog.Int("status", e.status), slog.Any("error", err))
	}
	writeProblem(w, r, e)
}

func writeProblem(w http.ResponseWriter, r *http.Request, e apiError) {
	scopeFrom(r.Context()).code = e.code
	if e.fields != nil || e.seats != nil {
		writeProblemBody(w, e, newProblem(r, e))
		return
	}
	// The common case, a problem without field errors, is written by hand:
	// the hammered seat answers it thousands of times a second.
	setRetryAfter(w, e)
	writeBody(w, contentTypeProblem, e.status, appendProblem(make([]byte, 0, 320), e, requestIDFrom(r.Context())))
}

// writeProblemBody writes body (a problem, possibly with extension members)
// with e's status and headers.
func writeProblemBody(w http.ResponseWriter, e apiError, body any) {
	setRetryAfter(w, e)
	writeJSON(w, contentTypeProblem, e.status, body)
}

func setRetryAfter(w http.ResponseWriter, e apiError) {
	if e.retryAfter > 0 {
		w.Header()["Retry-After"] = []string{strconv.Itoa(int(math.Ceil(e.retryAfter.Seconds())))}
	}
}

// appendProblem appends e as the JSON of problem (same members, same order,
// same escaping as encoding/json), without field errors.
func appendProblem(b []byte, e apiError, requestID string) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, "urn:seatlock:problem:"+e.code)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, e.title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, `,"detail":`...)
	b = appendJSONString(b, e.detail)
	b = append(b, `,"code":`...)
	b = appendJSONString(b, e.code)
	if requestID != "" {
		b = append(b, `,"requestId":`...)
		b = appendJSONString(b, requestID)
	}
	return append(b, "}\n"...)
}

// appendJSONString appends s as a JSON string, escaping as encoding/json
// does (control characters, quote, backslash, <, >, & for HTML, U+2028
// and U+2029) and replacing invalid UTF-8 with U+FFFD: details may quote
// what a client sent.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		var size int
		b, size = appendNonASCII(b, s[i:])
		i += size
	}
	return append(b, '"')
}

// hexDigits spell the \u escapes of both JSON encoders.
const hexDigits = "0123456789abcdef"

// appendNonASCII appends the character s starts with, which is not ASCII,
// as encoding/json and slog both write it: invalid UTF-8 as U+FFFD, U+2028
// and U+2029 escaped (JavaScript reads them as line ends), the rest as is.
// It returns how many bytes of s it used.
func appendNonASCII(b []byte, s string) ([]byte, int) {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		return append(b, `\ufffd`...), size
	case r == '\u2028' || r == '\u2029':
		return append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf]), size
	}
	return append(b, s[:size]...), size
}

func newProblem(r *http.Request, e apiError) problem {
	return problem{
		Type:      "urn:seatlock:problem:" + e.code,
		Title:     e.title,
		Status:    e.status,
		Detail:    e.detail,
		Code:      e.code,
		Errors:    e.fields,
		Seats:     e.seats,
		RequestID: requestIDFrom(r.Context()),
	}
}
