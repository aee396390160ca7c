package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/seatlock/seatlock/internal/auth"
)

func principalFrom(ctx context.Context) auth.Principal { return scopeFrom(ctx).principal }

// authenticate requires `Authorization: Bearer <JWT>` and puts the caller
// into the request context.
func (h *handler) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
		if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="seatlock"`)
			writeProblem(w, r, errUnauthorized)
			return
		}
		p, err := h.verifier.Verify(strings.TrimSpace(token))
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="seatlock", error="invalid_token"`)
			writeProblem(w, r, errUnauthorized)
			return
		}
		scopeFrom(r.Context()).principal = p
		next.ServeHTTP(w, r)
	})
}

// requireAdmin lets only the admin role through (403 otherwise).
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !principalFrom(r.Context()).IsAdmin() {
			writeProblem(w, r, errForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
