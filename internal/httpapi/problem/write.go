package problem

import (
	"encoding/json"
	"strconv"
	"sync"
)

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
	j, _ := json.Marshal(e.body(requestID))
	b = append(b, j...)
	return append(b, '\n')
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
