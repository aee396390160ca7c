package httpapi

import (
	"net/http"

	"github.com/seatlock/seatlock/api"
	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// serveOpenAPI answers the checked-in OpenAPI document. The end-to-end
// tests validate every answer they get against it, so it cannot drift.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header()["Cache-Control"] = noCache
	problem.WriteBody(w, contentTypeJSON, http.StatusOK, api.OpenAPI)
}
