package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/web"
)

// The page's files and their media types; nothing else is served.
var pageAssets = map[string]string{
	"app.js":    "text/javascript; charset=utf-8",
	"style.css": "text/css; charset=utf-8",
}

// pagePolicy keeps the page to its own origin: its script, its styles and
// the API.
var pagePolicy = []string{"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"}

// servePage answers GET / with the live seat map page.
func servePage(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, "index.html", "text/html; charset=utf-8")
}

// serveAsset answers GET /assets/{name} for the page's own files.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	contentType, ok := pageAssets[name]
	if !ok {
		problem.Write(w, r, problem.NotFound)
		return
	}
	serveFile(w, r, name, contentType)
}

func serveFile(w http.ResponseWriter, r *http.Request, name, contentType string) {
	body, err := web.FS.ReadFile(name)
	if err != nil {
		problem.Write(w, r, problem.NotFound)
		return
	}
	h := w.Header()
	h["Cache-Control"] = noCache
	h["Content-Security-Policy"] = pagePolicy
	problem.WriteBody(w, []string{contentType}, http.StatusOK, body)
}
