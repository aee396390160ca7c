package problem

import (
	"context"
	"log/slog"

	"github.com/seatlock/seatlock/internal/auth"
)

type scopeKey struct{}

// Scope is what the middleware learns about a request: one value in its
// context, filled in as the request goes (authentication adds the
// principal, Write the problem's code), so that no middleware copies the
// request again.
type Scope struct {
	ID        string
	Principal auth.Principal
	// Code is the problem code of the answer, for the request log.
	Code string
	// Log receives the causes of 5xx answers.
	Log *slog.Logger
}

// WithScope returns ctx carrying s.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns ctx's scope; an empty one (written to, then dropped)
// when the request has none.
func ScopeFrom(ctx context.Context) *Scope {
	if s, _ := ctx.Value(scopeKey{}).(*Scope); s != nil {
		return s
	}
	return &Scope{}
}

func (s *Scope) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// IsScopeKey reports whether key is the context key of a request's scope:
// a context that carries the scope itself (the HTTP edge's per-request
// context) answers Value for it.
func IsScopeKey(key any) bool {
	_, ok := key.(scopeKey)
	return ok
}
