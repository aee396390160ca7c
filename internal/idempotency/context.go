package idempotency

import "context"

type claimKey struct{}

// running is a claim in a request's context.
type running struct {
	claim Claim
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
