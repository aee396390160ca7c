package httpapi

import (
	"encoding/json"
	"net/http"
)

func writeJSON(w http.ResponseWriter, contentType string, status int, body any) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// The status line is out; an encoding or write error here can only
	// mean the client went away.
	_ = json.NewEncoder(w).Encode(body)
}

func ok(w http.ResponseWriter, status int, body any) {
	writeJSON(w, "application/json", status, body)
}
