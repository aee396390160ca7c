package httpapi

import (
	"context"
	"errors"
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
			refuseToken(w, r, challengeNoToken, errUnauthorized)
			return
		}
		p, err := h.verifier.Verify(strings.TrimSpace(token))
		switch {
		case errors.Is(err, auth.ErrExpiredToken):
			refuseToken(w, r, challengeExpired, errTokenExpired)
			return
		case err != nil:
			refuseToken(w, r, challengeInvalid, errTokenInvalid)
			return
		}
		scopeFrom(r.Context()).principal = p
		next.ServeHTTP(w, r)
	})
}

// The challenges of RFC 6750 section 3: no error code when the request
// carried no token, invalid_token with a description otherwise. The
// description says expired or invalid, never why a signature failed.
const (
	challengeNoToken = `Bearer realm="seatlock"`
	challengeInvalid = `Bearer realm="seatlock", error="invalid_token", error_description="the token is invalid"`
	challengeExpired = `Bearer realm="seatlock", error="invalid_token", error_description="the token has expired"`
)

var (
	errTokenInvalid = apiError{status: http.StatusUnauthorized, code: "unauthorized", title: "Unauthorized",
		detail: "The bearer token is invalid; send a token this service issued."}
	errTokenExpired = apiError{status: http.StatusUnauthorized, code: "unauthorized", title: "Unauthorized",
		detail: "The bearer token has expired; get a new one."}
)

func refuseToken(w http.ResponseWriter, r *http.Request, challenge string, e apiError) {
	w.Header()["Www-Authenticate"] = []string{challenge}
	writeProblem(w, r, e)
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
