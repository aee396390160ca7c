package httpapi

// The Idempotency-Key header over an idempotency.Store: the middleware
// that makes a POST safe to retry.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/idempotency"
)

const idempotencyHeader = "Idempotency-Key"

// idempotencyFinishTimeout bounds storing an answer, which runs even when
// the client has hung up: the work it answers for is done.
const idempotencyFinishTimeout = 3 * time.Second

var (
	errInvalidKey = &problem.Error{Status: http.StatusBadRequest, Code: "invalid_idempotency_key",
		Title:  "Invalid Idempotency-Key",
		Detail: "Idempotency-Key must be sent once, as 1 to 255 visible ASCII characters (optionally in double quotes)."}
	errKeyReused = &problem.Error{Status: http.StatusUnprocessableEntity, Code: "idempotency_key_reused",
		Title:  "Idempotency-Key reused",
		Detail: "This Idempotency-Key was sent before with another request; use a new key for a new request."}
	errKeyInUse = &problem.Error{Status: http.StatusConflict, Code: "idempotency_key_in_use",
		Title:      "Idempotency-Key in use",
		Detail:     "A request with this Idempotency-Key is still running; retry after the time in Retry-After.",
		RetryAfter: time.Second}
)

// replayedHeaders are the response headers kept with an answer.
var replayedHeaders = []string{"Content-Type", "Retry-After", "Location", "Preference-Applied"}

// idempotencyMiddleware makes a POST (or a DELETE) safe to retry with an
// Idempotency-Key: the first request with a key (per user) runs and its
// answer is stored; the same key with the same method, path and body
// replays that answer, marked Idempotent-Replayed: true; with another
// request it is refused (422), and while the first still runs it is
// refused too (409, Retry-After). A request without the header runs as
// before, at no cost.
//
// The request runs with its claim in its context (idempotency.WithClaim):
// the handlers pass the claim's ID to the use cases, which store it with
// the rows they write, in the same statement or transaction. Answers a
// retry should not see again are not stored: after a 5xx or a client gone
// (499) the work may have committed although nobody saw the answer, so the
// key is released with its claim (idempotency.Store.Release) and the retry
// resumes it: the use case finds what the claim made and answers with it
// (the handler then marks the answer Idempotent-Replayed: true, see
// markReplayed), or runs afresh when it made nothing. A 429
// did no work: its key is forgotten. The key is the authenticated user's
// (problem.Scope's principal); running is how long a key's first request
// is presumed running, and maxBody the largest body read (a larger one is
// refused by the handler after).
func idempotencyMiddleware(store idempotency.Store, running time.Duration, maxBody int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if store == nil {
			return next
		}
		return &idempotencyKeys{next: next, store: store, running: running, maxBody: maxBody}
	}
}

type idempotencyKeys struct {
	next    http.Handler
	store   idempotency.Store
	running time.Duration
	maxBody int64
}

func (m *idempotencyKeys) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	values := r.Header.Values(idempotencyHeader)
	if len(values) == 0 {
		m.next.ServeHTTP(w, r)
		return
	}
	key, ok := parseIdempotencyKey(values)
	if !ok {
		problem.Write(w, r, errInvalidKey)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, m.maxBody+1))
	if err != nil {
		problem.Write(w, r, problem.UnreadableBody)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	k := idempotency.Key{UserID: problem.ScopeFrom(r.Context()).Principal.UserID, Key: key}
	claim, stored, err := m.begin(r.Context(), k, fingerprint(r, body))
	switch {
	case errors.Is(err, idempotency.ErrKeyReused):
		problem.Write(w, r, errKeyReused)
		return
	case errors.Is(err, idempotency.ErrKeyInUse):
		problem.Write(w, r, errKeyInUse)
		return
	case err != nil:
		problem.Write(w, r, err)
		return
	case stored != nil:
		replay(w, *stored)
		return
	}

	outcome := &keyOutcome{}
	r = r.WithContext(context.WithValue(idempotency.WithClaim(r.Context(), claim), keyOutcomeKey{}, outcome))
	rec := &answerRecorder{header: http.Header{}}
	settled := false
	defer func() {
		// A panic is answered 500 further out: release the key, as for
		// any 5xx, so that a retry resumes it.
		if !settled {
			m.settle(r.Context(), claim, outcome, &answerRecorder{status: http.StatusInternalServerError})
		}
	}()
	m.next.ServeHTTP(rec, r)
	m.settle(r.Context(), claim, outcome, rec)
	settled = true
	rec.writeTo(w)
}

// begin claims k within the request's deadline but whatever the client
// does: a claim statement cut off by the client's leaving may still commit
// after the store has looked for it and given up, and such a key would
// stay in use, unsettled, for the whole running time, refusing the
// client's retry with 409 until then. Claimed, the key is settled like any
// other (a client gone is a 499).
func (m *idempotencyKeys) begin(ctx context.Context, k idempotency.Key, fingerprint []byte) (idempotency.Claim, *idempotency.Response, error) {
	detached := context.WithoutCancel(ctx)
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		detached, cancel = context.WithDeadline(detached, deadline)
	} else {
		detached, cancel = context.WithTimeout(detached, idempotencyFinishTimeout)
	}
	defer cancel()
	return m.store.Begin(detached, k, fingerprint, m.running)
}

// settle stores the answer; when the answer is not one to replay, it
// releases the key for a retry to resume (the work may have committed), or
// forgets it when no work was done: after a 429, or a refusal before any
// work whatever its answer (refusedBeforeWork).
func (m *idempotencyKeys) settle(ctx context.Context, claim idempotency.Claim, outcome *keyOutcome, rec *answerRecorder) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), idempotencyFinishTimeout)
	defer cancel()
	status := rec.statusOr200()
	var err error
	switch {
	case outcome.refusedBeforeWork || status == http.StatusTooManyRequests:
		err = m.store.Abandon(ctx, claim)
	case status == problem.StatusClientClosedRequest || status >= 500:
		err = m.store.Release(ctx, claim)
	default:
		kept := http.Header{}
		for _, name := range replayedHeaders {
			if v := rec.header.Values(name); len(v) > 0 {
				kept[name] = v
			}
		}
		err = m.store.Finish(ctx, claim, idempotency.Response{Status: status, Header: kept, Body: rec.body.Bytes()})
	}
	if err != nil {
		// The answer still goes out; a retry finds the key running until
		// its claim lapses, then resumes it.
		scope := problem.ScopeFrom(ctx)
		if scope.Log != nil {
			scope.Log.WarnContext(ctx, "could not settle an idempotency key",
				slog.String("request_id", scope.ID), slog.Any("error", err))
		}
	}
}

// parseIdempotencyKey reads the one header value: a bare key, or a
// quoted one as the draft's Structured Field string has it.
func parseIdempotencyKey(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	key := values[0]
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
		if strings.ContainsAny(key, `"\`) {
			return "", false
		}
	}
	return key, idempotency.ValidKey(key)
}

// fingerprint identifies a request for its key: method, path and body.
func fingerprint(r *http.Request, body []byte) []byte {
	sum := sha256.New()
	sum.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	sum.Write(body)
	return sum.Sum(nil)
}

func replay(w http.ResponseWriter, resp idempotency.Response) {
	for name, v := range resp.Header {
		w.Header()[name] = v
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.Header()["Cache-Control"] = problem.NoStore
	w.Header()["X-Content-Type-Options"] = problem.NoSniff
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// answerRecorder keeps a handler's answer so that it can be stored before
// it is sent.
type answerRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *answerRecorder) Header() http.Header { return r.header }

func (r *answerRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *answerRecorder) statusOr200() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *answerRecorder) writeTo(w http.ResponseWriter) {
	for name, v := range r.header {
		w.Header()[name] = v
	}
	w.WriteHeader(r.statusOr200())
	_, _ = w.Write(r.body.Bytes())
}

// markReplayed marks an answer that is the lost one of an earlier request
// with the same Idempotency-Key: the use case found that request's work
// (a resumed claim's booking or hold) instead of doing it now.
func markReplayed(w http.ResponseWriter, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}

// resumedClaim reports whether r runs under a resumed idempotency claim:
// its key's first request may have done the work and lost the answer.
func resumedClaim(r *http.Request) bool {
	claim, ok := idempotency.ClaimFrom(r.Context())
	return ok && claim.Resumed
}

// keyOutcome is what a handler tells the Idempotency-Key middleware of
// its request beyond the answer's status.
type keyOutcome struct {
	// refusedBeforeWork: the request was refused before it did any work
	// (the waiting room's gate), so the key is forgotten even when the
	// answer is a 5xx or the client has gone (499), which would otherwise
	// leave it for a retry to resume.
	refusedBeforeWork bool
}

type keyOutcomeKey struct{}

// refusedBeforeWork marks r, when it runs under an Idempotency-Key, as
// refused before it did any work: its key is forgotten, not kept.
func refusedBeforeWork(r *http.Request) {
	if outcome, ok := r.Context().Value(keyOutcomeKey{}).(*keyOutcome); ok {
		outcome.refusedBeforeWork = true
	}
}
