package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi/problem"
)

func principalFrom(ctx context.Context) auth.Principal { return problem.ScopeFrom(ctx).Principal }

// authenticate requires `Authorization: Bearer <JWT>` and puts the caller
// into the request scope.
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
		problem.ScopeFrom(r.Context()).Principal = p
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
	errUnauthorized = &problem.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Title: "Unauthorized",
		Detail: "A bearer token is required: send Authorization: Bearer <token>."}
	errTokenInvalid = &problem.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Title: "Unauthorized",
		Detail: "The bearer token is invalid; send a token this service issued."}
	errTokenExpired = &problem.Error{Status: http.StatusUnauthorized, Code: "unauthorized", Title: "Unauthorized",
		Detail: "The bearer token has expired; get a new one."}
	errForbidden = &problem.Error{Status: http.StatusForbidden, Code: "forbidden", Title: "Forbidden",
		Detail: "Your role does not allow this."}
)

func refuseToken(w http.ResponseWriter, r *http.Request, challenge string, e *problem.Error) {
	w.Header()["Www-Authenticate"] = []string{challenge}
	problem.Write(w, r, e)
}

// requireAdmin lets only the admin role through (403 otherwise).
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !principalFrom(r.Context()).IsAdmin() {
			problem.Write(w, r, errForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
