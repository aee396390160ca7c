// Package httpapi is the driving HTTP adapter: it decodes and validates
// requests, authenticates callers, calls the booking use cases and maps their
// errors to RFC 9457 problems with stable codes (one table, problem.go).
package httpapi

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-playground/validator/v10"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
)

// Bookings is what the HTTP edge needs of the booking use cases.
type Bookings interface {
	CreateSchedule(ctx context.Context, title string, startsAt time.Time, seatCount int) (reservation.Schedule, error)
	Schedules(ctx context.Context, after int64, limit int) (reservation.SchedulePage, error)
	Schedule(ctx context.Context, id int64) (reservation.Schedule, error)
	SeatMap(ctx context.Context, scheduleID int64) ([]reservation.Seat, error)
	Reserve(ctx context.Context, cmd reservation.ReserveCommand) (reservation.Reservation, error)
	Reservation(ctx context.Context, id uuid.UUID, userID string) (reservation.Reservation, error)
	CancelReservation(ctx context.Context, id uuid.UUID, userID string) error
}

// Checkout is what the HTTP edge needs of the hold use cases.
type Checkout interface {
	Hold(ctx context.Context, cmd reservation.HoldCommand) (reservation.Hold, error)
	HoldByID(ctx context.Context, id uuid.UUID, userID string) (reservation.Hold, error)
	Confirm(ctx context.Context, id uuid.UUID, userID string) ([]reservation.Reservation, error)
	Release(ctx context.Context, id uuid.UUID, userID string) error
}

// Check is one readiness probe: a dependency that must answer Ping.
type Check struct {
	Name string
	Ping func(ctx context.Context) error
}

// idempotencyRunningMargin is added to the request timeout to get how long
// a key's first request is presumed running.
const idempotencyRunningMargin = 10 * time.Second

// isStream tells the long-lived streams, which the request timeout does
// not bound.
func isStream(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/seats/events") }

// DefaultRequestTimeout bounds one request's work when Options leaves it 0.
const DefaultRequestTimeout = 10 * time.Second

// Options are the handler's dependencies.
type Options struct {
	Bookings Bookings
	Checkout Checkout
	// Idempotency keeps the answers of requests sent with an
	// Idempotency-Key; nil ignores the header.
	Idempotency idempotency.Store
	// IdempotencyRunning is how long a key's first request is presumed
	// running (then a retry may run it again); RequestTimeout plus a
	// margin when zero.
	IdempotencyRunning time.Duration
	Verifier           *auth.Verifier
	Checks             []Check
	Logger             *slog.Logger
	// RequestTimeout bounds each request's work; past it, dependencies
	// are reported unavailable (503). It must exceed MaxWait.
	RequestTimeout time.Duration
	// MaxWait caps `Prefer: wait` (LOCK_MAX_WAIT).
	MaxWait time.Duration
	// Metrics serves GET /metrics when set.
	Metrics http.Handler
	// Feed streams live seat maps (GET /schedules/{id}/seats/events); nil
	// answers that endpoint 503.
	Feed SeatFeed
	// MaxStreams caps the open seat-map streams (DefaultMaxStreams when
	// zero); past it, 503 too_many_streams.
	MaxStreams int
	// StreamHeartbeat is how often an idle stream gets a comment
	// (DefaultStreamHeartbeat when zero).
	StreamHeartbeat time.Duration
	// Shutdown, once closed, ends every open stream: the server is
	// shutting down and would otherwise wait for them.
	Shutdown <-chan struct{}
	// AccessLog, when set, receives the one-line-per-request log as JSON
	// lines written directly (the same lines Logger would write, cheaper);
	// nil sends them through Logger.
	AccessLog io.Writer
	// Observer, when set, learns every answered request and the number of
	// open streams (for metrics).
	Observer Observer
	// UserLimiter limits the requests of each authenticated user, and
	// AddressLimiter those without a token per client address (the public
	// routes); nil: no limit. Health, readiness and metrics are never
	// limited.
	UserLimiter    Limiter
	AddressLimiter Limiter
}

// Observer is told what the API answered.
type Observer interface {
	// Request is called once per request, after its answer: route is the
	// matched route pattern ("" when none matched), code the problem's
	// code when the answer was one; status 499 means the client went away
	// first.
	Request(method, route string, status int, code string, elapsed time.Duration)
	// Streams is called with the number of open live seat-map streams
	// each time it changes.
	Streams(open int64)
	// RateLimited is called for each request refused by the named limit
	// ("user" or "ip").
	RateLimited(limit string)
}

type noObserver struct{}

func (noObserver) Request(string, string, int, string, time.Duration) {}
func (noObserver) Streams(int64)                                      {}
func (noObserver) RateLimited(string)                                 {}

type handler struct {
	bookings           Bookings
	checkout           Checkout
	idempotency        idempotency.Store
	idempotencyRunning time.Duration
	verifier           *auth.Verifier
	feed               SeatFeed
	streams            *streams
	snapshots          snapshots
	heartbeat          time.Duration
	shutdown           <-chan struct{}
	checks             []Check
	log                *slog.Logger
	validate           *validator.Validate
	maxWait            time.Duration
	observer           Observer
}

// NewHandler returns the service's HTTP API.
func NewHandler(opts Options) http.Handler {
	var observer Observer = noObserver{}
	if opts.Observer != nil {
		observer = opts.Observer
	}
	h := &handler{
		bookings:           opts.Bookings,
		checkout:           opts.Checkout,
		idempotency:        opts.Idempotency,
		idempotencyRunning: opts.IdempotencyRunning,
		verifier:           opts.Verifier,
		feed:               opts.Feed,
		streams:            &streams{max: int64(cmp.Or(opts.MaxStreams, DefaultMaxStreams)), observer: observer},
		heartbeat:          cmp.Or(opts.StreamHeartbeat, DefaultStreamHeartbeat),
		shutdown:           opts.Shutdown,
		checks:             opts.Checks,
		log:                opts.Logger,
		validate:           newValidator(),
		maxWait:            opts.MaxWait,
		observer:           observer,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	timeout := opts.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	if h.idempotencyRunning <= 0 {
		h.idempotencyRunning = timeout + idempotencyRunningMargin
	}

	r := chi.NewRouter()
	r.Use(withScope(timeout, isStream), logRequests(h.log, opts.AccessLog, observer), recoverPanics(h.log))
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { writeProblem(w, r, errNotFound) })
	r.MethodNotAllowed(methodNotAllowed(r))

	r.Get("/healthz", h.healthz)
	r.Get("/readyz", h.readyz)
	if opts.Metrics != nil {
		r.Method(http.MethodGet, "/metrics", opts.Metrics)
	}
	r.Group(func(r chi.Router) {
		r.Use(h.admit(limitAddress, opts.AddressLimiter, addressKey))
		r.Get("/openapi.json", serveOpenAPI)
		r.Get("/", servePage)
		r.Get("/assets/{name}", serveAsset)
		// Schedules and seat maps are public, as a cinema's programme and
		// seat map are: they name no user.
		r.Get("/schedules", h.listSchedules)
		r.Get("/schedules/{id}", h.getSchedule)
		r.Get("/schedules/{id}/seats", h.seatMap)
		r.Get("/schedules/{id}/seats/events", h.seatEvents)
	})
	r.Group(func(r chi.Router) {
		r.Use(h.authenticate, h.admit(limitUser, opts.UserLimiter, userKey))
		r.With(requireAdmin).Post("/schedules", h.createSchedule)
		r.With(h.idempotent).Post("/reservations", h.reserve)
		r.Get("/reservations/{id}", h.getReservation)
		r.Delete("/reservations/{id}", h.cancelReservation)
		r.With(h.idempotent).Post("/holds", h.createHold)
		r.Get("/holds/{id}", h.getHold)
		r.With(h.idempotent).Post("/holds/{id}/confirm", h.confirmHold)
		r.Delete("/holds/{id}", h.releaseHold)
	})
	return r
}
