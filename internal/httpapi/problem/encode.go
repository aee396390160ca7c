package problem

import (
	"encoding/json"
	"strconv"
	"sync"
)

// The problems written again and again (a hot seat's seat_taken, a
// crowd's rate_limited) keep their JSON up to the request id, encoded
// once: writing one then costs an append instead of json.Marshal's
// reflection over the whole body.

// encoded is an Error's JSON up to (not including) its requestId member,
// with the members it was encoded from: a copy of the Error whose members
// changed since is encoded afresh.
type encoded struct {
	status              int
	title, detail, code string
	prefix              []byte
}

// Static encodes e's body once and returns e, for a problem declared once
// and written as it is (or as a copy with another RetryAfter).
func Static(e *Error) *Error {
	b, err := json.Marshal(e.body(""))
	if err != nil || len(b) == 0 || b[len(b)-1] != '}' {
		return e // written the slow way
	}
	e.encoded = &encoded{status: e.Status, title: e.Title, detail: e.Detail, code: e.Code, prefix: b[:len(b)-1]}
	return e
}

// body is e's JSON body for the request id.
func (e *Error) body(requestID string) body {
	return body{Type: "urn:seatlock:problem:" + e.Code, Title: e.Title, Status: e.Status, Detail: e.Detail,
		Code: e.Code, Errors: e.Fields, Seats: e.Seats, RequestID: requestID, Checks: e.Checks, Available: e.Available,
		HoldID: e.HoldID, Queue: e.Queue}
}

// JSON is e's body for the request id, as Write writes it, for an answer
// written where there is no http.ResponseWriter: the one net/http makes
// itself to a header block too large (httpapi.ProblemListener).
func (e *Error) JSON(requestID string) []byte { return e.appendJSON(nil, requestID) }

// appendJSON appends e's body, as json.Marshal writes it, and a newline.
func (e *Error) appendJSON(b []byte, requestID string) []byte {
	if enc := e.encoded; enc != nil && enc.status == e.Status && enc.title == e.Title && enc.detail == e.Detail &&
		enc.code == e.Code && e.Fields == nil && e.Seats == nil && e.Checks == nil && e.Available == nil &&
		e.HoldID == "" && e.Queue == "" && plainJSON(requestID) {
		b = append(b, enc.prefix...)
		if requestID != "" {
			b = append(b, `,"requestId":"`...)
			b = append(b, requestID...)
			b = append(b, '"')
		}
		return append(b, '}', '\n')
	}
	j, _ := json.Marshal(e.body(requestID))
	b = append(b, j...)
	return append(b, '\n')
}

// plainJSON reports whether s is written in JSON as it is: printable ASCII
// that json.Marshal escapes none of.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// bodyBuffers hold answers while they are written (a Writer never keeps
// what it is given); one grown past maxPooledBody is left to the
// collector.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooledBody = 16 << 10

// contentLengths are the Content-Length values of the short answers, made
// once.
var contentLengths = func() [][]string {
	v := make([][]string, 2048)
	for n := range v {
		v[n] = []string{strconv.Itoa(n)}
	}
	return v
}()

func contentLength(n int) []string {
	if n < len(contentLengths) {
		return contentLengths[n]
	}
	return []string{strconv.Itoa(n)}
}
