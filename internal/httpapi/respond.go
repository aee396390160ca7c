package httpapi

import (
	"encoding/json"
	"net/http"

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
	problem.WriteBody(w, contentTypeJSON, status, append(body, '\n'))
	return nil
}

// noContent answers 204.
func noContent(w http.ResponseWriter) error {
	w.Header()["Cache-Control"] = problem.NoStore
	w.WriteHeader(http.StatusNoContent)
	return nil
}
