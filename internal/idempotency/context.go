package idempotency

import (
	"context"
	"sync/atomic"
)

type claimKey struct{}

// running is a claim in a request's context, with what the use case made
// of it.
type running struct {
	claim     Claim
	recovered atomic.Bool
}

// WithClaim returns ctx carrying c, the claim the request runs under: the
// HTTP edge puts it there, the handlers pass it to the use cases.
func WithClaim(ctx context.Context, c Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, &running{claim: c})
}

// ClaimFrom returns the claim of ctx's request; false when the request
// sent no key.
func ClaimFrom(ctx context.Context) (Claim, bool) {
	r, ok := ctx.Value(claimKey{}).(*running)
	if !ok {
		return Claim{}, false
	}
	return r.claim, true
}

// MarkRecovered records that the use case answered a resumed claim with
// what its earlier request had made, instead of working: the answer is
// that request's, and the edge marks it Idempotent-Replayed. Without a
// resumed claim in ctx it does nothing.
func MarkRecovered(ctx context.Context) {
	if r, ok := ctx.Value(claimKey{}).(*running); ok && r.claim.Resumed {
		r.recovered.Store(true)
	}
}

// Recovered reports whether MarkRecovered was called for ctx's claim.
func Recovered(ctx context.Context) bool {
	r, ok := ctx.Value(claimKey{}).(*running)
	return ok && r.recovered.Load()
}
