package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// Header values shared by responses: assigning them directly skips
// canonicalising the key and allocating a slice per response (net/http
// only reads them).
var (
	contentTypeJSON = []string{"application/json"}
	noCache         = []string{"no-cache"}
)

// handle adapts a handler that returns its error: every error is answered
// by problem.Write.
func handle(f func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			problem.Write(w, r, err)
		}
	}
}

// ok answers v as JSON.
func ok(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeBody(w, contentTypeJSON, status, append(body, '\n'))
	return nil
}

// writeBody writes a whole answer with its length, so that it goes out in
// one piece. Answers are no-store (they name a user, or change with every
// booking) unless the handler set Cache-Control first: what a client may
// keep and revalidate (the seat map with its ETag, the page, the
// document) says no-cache.
func writeBody(w http.ResponseWriter, contentType []string, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	if _, set := h["Cache-Control"]; !set {
		h["Cache-Control"] = problem.NoStore
	}
	h["X-Content-Type-Options"] = problem.NoSniff
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// noContent answers 204.
func noContent(w http.ResponseWriter) error {
	w.Header()["Cache-Control"] = problem.NoStore
	w.WriteHeader(http.StatusNoContent)
	return nil
}
