package idempotency

import "context"

type claimKey struct{}

// WithClaim returns ctx carrying c, the claim the request runs under: the
// HTTP edge puts it there, the handlers pass it to the use cases.
func WithClaim(ctx context.Context, c Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// ClaimFrom returns the claim of ctx's request; false when the request
// sent no key.
func ClaimFrom(ctx context.Context) (Claim, bool) {
	c, ok := ctx.Value(claimKey{}).(Claim)
	return c, ok
}
