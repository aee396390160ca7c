package httpapi

import (
	"net/http"

	"github.com/seatlock/seatlock/api"
)

// serveOpenAPI answers the checked-in OpenAPI document. The end-to-end
// tests validate every answer they get against it, so it cannot drift.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header()["Cache-Control"] = noCache
	writeBody(w, contentTypeJSON, http.StatusOK, api.OpenAPI)
}
