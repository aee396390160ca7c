package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Header values shared by every response: assigning them directly skips
// canonicalising the key and allocating a slice per response (net/http
// only reads them).
var (
	contentTypeJSON    = []string{"application/json"}
	contentTypeProblem = []string{"application/problem+json"}
	noStore            = []string{"no-store"}
	noCache            = []string{"no-cache"}
	noSniff            = []string{"nosniff"}
)

func writeJSON(w http.ResponseWriter, contentType []string, status int, body any) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	// The status line is out; an encoding or write error here can only
	// mean the client went away.
	_ = json.NewEncoder(w).Encode(body)
}

// writeBody writes an encoded JSON body with its length, so that the
// response goes out in one piece.
// A Cache-Control set beforehand is kept; no-store otherwise.
func writeBody(w http.ResponseWriter, contentType []string, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	if _, set := h["Cache-Control"]; !set {
		h["Cache-Control"] = noStore
	}
	h["X-Content-Type-Options"] = noSniff
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func ok(w http.ResponseWriter, status int, body any) {
	writeJSON(w, contentTypeJSON, status, body)
}

// noContent answers 204.
func noContent(w http.ResponseWriter) {
	w.Header()["Cache-Control"] = noStore
	w.WriteHeader(http.StatusNoContent)
}
