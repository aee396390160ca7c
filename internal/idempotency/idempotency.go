// Package idempotency holds the port for Idempotency-Key retries (the IETF
// draft "The Idempotency-Key HTTP Header Field", with Stripe's and pretix's
// semantics): a store that claims a key for the first request that carries
// it and keeps that request's answer for the retries. The HTTP adapter
// does the rest; the PostgreSQL adapter implements Store.
package idempotency

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// Limits of a key.
const (
	// MaxKeyLen is the longest key accepted, in bytes (all visible ASCII).
	MaxKeyLen = 255
	// Retention is how long a key and its answer are kept.
	Retention = 24 * time.Hour
)

var (
	// ErrKeyInUse reports a key whose first request is still running.
	ErrKeyInUse = errors.New("idempotency: key in use by a request still running")
	// ErrKeyReused reports a key sent again with another request.
	ErrKeyReused = errors.New("idempotency: key reused for another request")
)

// Key names one key of one user: keys are per user.
type Key struct {
	UserID string
	Key    string
}

// Claim is a key won by one request: Finish, Release or Abandon it.
//
// The claim's ID is stored with the business rows the request writes (in
// their own statement or transaction), so that a retry can find what the
// request made when its answer was lost.
type Claim struct {
	Key
	ID uuid.UUID
	// Resumed reports a claim taken over from an earlier request with the
	// same key and fingerprint that ended without an answer (Release, or
	// it outlived its running time): the ID is that request's, and its
	// work may have committed. The use cases look it up before they work.
	Resumed bool
	// Admitted reports, for a resumed claim, that the earlier request
	// passed the waiting room's gate before it worked (Store.Admit): its
	// retry may finish it without an admission. A resumed claim without
	// it is gated like a new request.
	Admitted bool
}

// Response is an answer kept for replay.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Store keeps keys and their answers. Every method wraps a failure to
// reach the store as the adapter's unavailable error.
type Store interface {
	// Begin claims k for a request with fingerprint, for at most
	// runningFor (after that a request that died is presumed gone and the
	// key can be claimed again). When a request with k has finished and
	// its fingerprint matches, Begin returns its answer instead (and no
	// claim). ErrKeyInUse while another request holds the claim,
	// ErrKeyReused when the fingerprint differs. An expired key counts as
	// new. A key whose request ended without an answer (Release, or past
	// runningFor) is taken over with its claim's ID kept: the Claim is
	// Resumed.
	Begin(ctx context.Context, k Key, fingerprint []byte, runningFor time.Duration) (Claim, *Response, error)
	// Finish stores the claim's answer for replay until the key expires.
	Finish(ctx context.Context, c Claim, resp Response) error
	// Release ends the claim's request without an answer, for an outcome
	// the client could not see (5xx, the client gone): the key keeps its
	// claim's ID and can be claimed at once, and the retry resumes the
	// claim (its work may have committed under that ID).
	Release(ctx context.Context, c Claim) error
	// Admit records that the claim's request passed the waiting room's
	// gate, before it does any work: a later claim that resumes the key
	// is Admitted. A key expired or taken over meanwhile records nothing.
	Admit(ctx context.Context, c Claim) error
	// Abandon forgets the claim's key, so that a retry runs anew with a
	// new claim: for a request refused before it did any work (429, or
	// the waiting room's gate).
	Abandon(ctx context.Context, c Claim) error
	// Purge deletes every expired key and returns how many.
	Purge(ctx context.Context) (int64, error)
}

// ValidKey reports whether key is 1..MaxKeyLen visible ASCII characters.
func ValidKey(key string) bool {
	if len(key) < 1 || len(key) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}
