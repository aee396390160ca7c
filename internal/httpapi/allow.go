package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

// routeMethods are the methods a route can be registered for, in the
// order Allow lists them.
var routeMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace,
}

// methodNotAllowed answers a path the routes know with a method they do
// not, naming the methods they do in Allow (RFC 9110 15.5.6 requires it).
// chi also sends here a method it does not know at all, on any path: a
// path no route has is answered 404, as for any other method.
func methodNotAllowed(routes chi.Routes) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		allowed := allowedMethods(routes, r)
		if len(allowed) == 0 {
			problem.Write(w, r, problem.NotFound)
			return
		}
		list := strings.Join(allowed, ", ")
		w.Header()["Allow"] = []string{list}
		problem.Write(w, r, &problem.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
			Title: "Method not allowed", Detail: "This resource supports " + list + " only."})
	}
}

// allowedMethods lists the methods a route answers at r's path, matched
// as chi matches it: on the raw path when there is one.
func allowedMethods(routes chi.Routes, r *http.Request) []string {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var allowed []string
	for _, method := range routeMethods {
		// HEAD is served by the GET route (middleware.GetHead).
		if routes.Match(chi.NewRouteContext(), method, path) ||
			method == http.MethodHead && routes.Match(chi.NewRouteContext(), http.MethodGet, path) {
			allowed = append(allowed, method)
		}
	}
	return allowed
}
