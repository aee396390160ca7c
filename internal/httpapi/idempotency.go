package httpapi

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

	"github.com/seatlock/seatlock/internal/idempotency"
)

const idempotencyHeader = "Idempotency-Key"

// idempotencyFinishTimeout bounds storing an answer, which runs even when
// the client has hung up: the work it answers for is done.
const idempotencyFinishTimeout = 3 * time.Second

var (
	errInvalidIdempotencyKey = apiError{status: http.StatusBadRequest, code: "invalid_idempotency_key",
		title:  "Invalid Idempotency-Key",
		detail: "Idempotency-Key must be sent once, as 1 to 255 visible ASCII characters (optionally in double quotes)."}
	errIdempotencyKeyReused = apiError{status: http.StatusUnprocessableEntity, code: "idempotency_key_reused",
		title:  "Idempotency-Key reused",
		detail: "This Idempotency-Key was sent before with another request; use a new key for a new request."}
	errIdempotencyKeyInUse = apiError{status: http.StatusConflict, code: "idempotency_key_in_use",
		title:      "Idempotency-Key in use",
		detail:     "A request with this Idempotency-Key is still running; retry after the time in Retry-After.",
		retryAfter: time.Second}
)

// replayedHeaders are the response headers kept with an answer.
var replayedHeaders = []string{"Content-Type", "Retry-After", "Location", "Preference-Applied"}

// idempotent makes a POST safe to retry with an Idempotency-Key: the first
// request with a key (per user) runs and its answer is stored; the same
// key with the same method, path and body replays that answer, marked
// Idempotent-Replayed: true; with another request it is refused (422),
// and while the first still runs it is refused too (409, Retry-After).
// Answers that a retry should not see again are not stored: 429 and 5xx.
// A request without the header runs as before.
func (h *handler) idempotent(next http.Handler) http.Handler {
	if h.idempotency == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values(idempotencyHeader)
		if len(values) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		key, ok := parseIdempotencyKey(values)
		if !ok {
			writeProblem(w, r, errInvalidIdempotencyKey)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		if err != nil {
			writeProblem(w, r, *errUnreadableBody())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))

		k := idempotency.Key{UserID: principalFrom(r.Context()).UserID, Key: key}
		claim, stored, err := h.idempotency.Begin(r.Context(), k, fingerprint(r, body), h.idempotencyRunning)
		switch {
		case errors.Is(err, idempotency.ErrKeyReused):
			writeProblem(w, r, errIdempotencyKeyReused)
			return
		case errors.Is(err, idempotency.ErrKeyInUse):
			writeProblem(w, r, errIdempotencyKeyInUse)
			return
		case err != nil:
			writeError(w, r, h.log, err)
			return
		case stored != nil:
			replay(w, *stored)
			return
		}

		rec := &recorder{header: http.Header{}}
		settled := false
		defer func() {
			// A panic is answered 500 further out: forget the key, as
			// for any 5xx, so that a retry runs again.
			if !settled {
				h.settle(r.Context(), claim, &recorder{status: http.StatusInternalServerError})
			}
		}()
		next.ServeHTTP(rec, r)
		h.settle(r.Context(), claim, rec)
		settled = true
		rec.writeTo(w)
	})
}

// settle stores the answer, or forgets the key when the answer is not one
// to replay.
func (h *handler) settle(ctx context.Context, claim idempotency.Claim, rec *recorder) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), idempotencyFinishTimeout)
	defer cancel()
	status := rec.statusOr200()
	var err error
	if status == http.StatusTooManyRequests || status == statusClientClosedRequest || status >= 500 {
		err = h.idempotency.Abandon(ctx, claim)
	} else {
		kept := http.Header{}
		for _, name := range replayedHeaders {
			if v := rec.header.Values(name); len(v) > 0 {
				kept[name] = v
			}
		}
		err = h.idempotency.Finish(ctx, claim, idempotency.Response{Status: status, Header: kept, Body: rec.body.Bytes()})
	}
	if err != nil {
		// The answer still goes out; a retry finds the key running until
		// its claim lapses, then runs again.
		h.log.WarnContext(ctx, "could not settle an idempotency key",
			slog.String("request_id", requestIDFrom(ctx)), slog.Any("error", err))
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
	w.Header()["Cache-Control"] = noStore
	w.Header()["X-Content-Type-Options"] = noSniff
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// recorder keeps a handler's answer so that it can be stored before it is
// sent.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) statusOr200() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *recorder) writeTo(w http.ResponseWriter) {
	for name, v := range r.header {
		w.Header()[name] = v
	}
	w.WriteHeader(r.statusOr200())
	_, _ = w.Write(r.body.Bytes())
}
