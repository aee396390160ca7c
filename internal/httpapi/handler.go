// Package httpapi is the driving HTTP adapter: it decodes and validates
// requests, authenticates callers, calls the booking use cases and maps their
// errors to RFC 9457 problems with stable codes (package problem). The
// seat map is package seatmap, its live streams package seatstream.
package httpapi

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-playground/validator/v10"
	"github.com/google/uuid"

	"github.com/seatlock/seatlock/internal/auth"
	"github.com/seatlock/seatlock/internal/httpapi/problem"
	"github.com/seatlock/seatlock/internal/httpapi/seatstream"
	"github.com/seatlock/seatlock/internal/idempotency"
	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatmap"
	"github.com/seatlock/seatlock/internal/webhook"
)

// Bookings is what the HTTP edge needs of the booking use cases.
type Bookings interface {
	CreateLaidOutSchedule(ctx context.Context, title string, startsAt time.Time, layout reservation.Layout) (reservation.Schedule, error)
	Schedules(ctx context.Context, after int64, limit int) (reservation.SchedulePage, error)
	Schedule(ctx context.Context, id int64) (reservation.Schedule, error)
	Reserve(ctx context.Context, cmd reservation.ReserveCommand) (reservation.Booked, error)
	Reservation(ctx context.Context, id uuid.UUID, userID string) (reservation.Reservation, error)
	CancelReservation(ctx context.Context, id uuid.UUID, userID string) (again bool, err error)
}

// Checkout is what the HTTP edge needs of the hold use cases.
type Checkout interface {
	Hold(ctx context.Context, cmd reservation.HoldCommand) (reservation.Held, error)
	HoldBest(ctx context.Context, cmd reservation.BestHoldCommand) (reservation.Held, int, error)
	HoldByID(ctx context.Context, id uuid.UUID, userID string) (reservation.Hold, error)
	Confirm(ctx context.Context, id uuid.UUID, userID string) (reservation.Confirmed, error)
	Release(ctx context.Context, id uuid.UUID, userID string) error
	Extend(ctx context.Context, id uuid.UUID, userID string) (reservation.Hold, error)
}

// Check is one readiness probe: a dependency that must answer Ping.
type Check struct {
	Name string
	Ping func(ctx context.Context) error
}

// idempotencyRunningMargin is added to the request timeout to get how long
// a key's first request is presumed running.
const idempotencyRunningMargin = 10 * time.Second

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
	// AccessLog, when set, receives the one-line-per-request log as JSON
	// lines written directly (see accessLine); nil logs requests through
	// Logger.
	AccessLog io.Writer
	// RequestTimeout bounds each request's work; past it, dependencies
	// are reported unavailable (503). It must exceed MaxWait.
	RequestTimeout time.Duration
	// MaxWait caps `Prefer: wait` (LOCK_MAX_WAIT).
	MaxWait time.Duration
	// Metrics serves GET /metrics when set.
	Metrics http.Handler
	// The seat map (GET /schedules/{id}/seats) and its live streams
	// (…/events): seatstream.Options says what each is (StreamHeartbeat
	// is its Heartbeat); SeatMaps is a Maps of its own when nil.
	Feed            seatstream.Feed
	SeatImages      seatstream.Images
	SeatMaps        *seatmap.Maps
	MaxStreams      int
	StreamHeartbeat time.Duration
	// Shutdown, once closed, ends every open stream: the server is
	// shutting down and would otherwise wait for them.
	Shutdown <-chan struct{}
	// Observer, when set, learns every answered request and the number of
	// open streams (for metrics).
	Observer Observer
	// UserLimiter limits the requests of each authenticated user, and
	// AddressLimiter those without a token per client address (the public
	// routes); nil: no limit. Health, readiness and metrics are never
	// limited.
	UserLimiter    Limiter
	AddressLimiter Limiter
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client (TRUSTED_PROXIES): the per-address limit counts the client
	// behind them, not them.
	TrustedProxies []netip.Prefix
	// Room is the waiting room; nil (no Redis) answers its endpoints 501
	// queue_unsupported and lets every booking through.
	Room WaitingRoom
	// MaxQueueStreams caps the open ticket streams
	// (DefaultMaxQueueStreams when zero); past it, 503 too_many_streams.
	MaxQueueStreams int
	// Webhooks, when set, serves the webhook endpoints' admin routes
	// (/webhooks...): the URLs they take are checked against
	// WebhookConfig (its AllowInsecure and AllowPrivate), their hosts
	// resolved by WebhookResolver (net.DefaultResolver when nil).
	Webhooks        Webhooks
	WebhookConfig   webhook.Config
	WebhookResolver webhook.Resolver
	// Routed, when set, is the first middleware of the router: it sees
	// each request's matched route pattern (chi.RouteContext) once the
	// request is answered (tracing.RouteNames names the request's span
	// after it). Nil, as when tracing is off: nothing is added.
	Routed func(http.Handler) http.Handler
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
	// BestAvailable is called for each best-available hold that tried
	// seats: how many choices it tried, and whether it held one.
	BestAvailable(attempts int, held bool)
}

type noObserver struct{}

func (noObserver) Request(string, string, int, string, time.Duration) {}
func (noObserver) Streams(int64)                                      {}
func (noObserver) RateLimited(string)                                 {}
func (noObserver) BestAvailable(int, bool)                            {}

type handler struct {
	// maps renders the seat maps of images, for GET and the streams'
	// snapshots.
	maps     *seatmap.Maps
	images   seatstream.Images
	bookings Bookings
	checkout Checkout
	verifier *auth.Verifier
	checks   []Check
	log      *slog.Logger
	validate *validator.Validate
	maxWait  time.Duration
	observer Observer
	room     WaitingRoom
	// keys are the Idempotency-Key store (nil without one): the gate
	// records in it that a keyed request was admitted.
	keys idempotency.Store
	// queueStreams are the open ticket streams, at most maxQueueStreams.
	queueStreams    atomic.Int64
	maxQueueStreams int
	// shutdown, once closed, ends the open streams.
	shutdown <-chan struct{}
	// webhooks stores the webhook endpoints; their URLs are checked
	// against webhookConfig, resolved by resolver.
	webhooks      Webhooks
	webhookConfig webhook.Config
	resolver      webhook.Resolver
}

// NewHandler returns the service's HTTP API.
func NewHandler(opts Options) http.Handler {
	var observer Observer = noObserver{}
	if opts.Observer != nil {
		observer = opts.Observer
	}
	h := &handler{
		bookings:        opts.Bookings,
		checkout:        opts.Checkout,
		verifier:        opts.Verifier,
		checks:          opts.Checks,
		log:             cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		validate:        newValidator(),
		maxWait:         opts.MaxWait,
		observer:        observer,
		maps:            cmp.Or(opts.SeatMaps, &seatmap.Maps{}),
		images:          opts.SeatImages,
		room:            opts.Room,
		keys:            opts.Idempotency,
		maxQueueStreams: cmp.Or(max(opts.MaxQueueStreams, 0), DefaultMaxQueueStreams),
		shutdown:        opts.Shutdown,
		webhooks:        opts.Webhooks,
		webhookConfig:   opts.WebhookConfig,
		resolver:        opts.WebhookResolver,
	}
	timeout := cmp.Or(max(opts.RequestTimeout, 0), DefaultRequestTimeout)
	// The routes that take an Idempotency-Key read bodies of maxBodyBytes
	// (anyBody); POST /schedules, whose bodies may be larger, takes none.
	idempotent := idempotencyMiddleware(opts.Idempotency,
		cmp.Or(max(opts.IdempotencyRunning, 0), timeout+idempotencyRunningMargin), maxBodyBytes)
	stream := seatstream.New(seatstream.Options{
		Feed:       opts.Feed,
		Schedule:   h.bookings.Schedule,
		Images:     opts.SeatImages,
		Maps:       h.maps,
		MaxStreams: opts.MaxStreams,
		Heartbeat:  opts.StreamHeartbeat,
		Shutdown:   opts.Shutdown,
		Streams:    observer.Streams,
	})

	r := chi.NewRouter()
	if opts.Routed != nil {
		r.Use(opts.Routed)
	}
	// HEAD is answered wherever GET is, by the GET's handler: net/http
	// sends its status and headers and drops its body.
	r.Use(recoverPanics(h.log), checkHeaders, middleware.GetHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { problem.Write(w, r, problem.NotFound) })
	r.MethodNotAllowed(methodNotAllowed(r))
	publicLimit := h.admit(limitAddress, opts.AddressLimiter, addressKey(opts.TrustedProxies))

	// The live seat map lasts as long as its client: no request timeout.
	r.With(publicLimit).Get("/schedules/{id}/seats/events", handle(func(w http.ResponseWriter, r *http.Request) error {
		id, valid := parseID(chi.URLParam(r, "id"))
		if !valid {
			return reservation.ErrScheduleNotFound
		}
		stream.Serve(w, r, id)
		return nil
	}))
	// A buyer follows their place in a queue as long as they wait.
	r.With(h.authenticate, h.admit(limitUser, opts.UserLimiter, userKey)).Get("/queue/{ticket}/events", handle(h.ticketEvents))
	r.Group(func(r chi.Router) {
		r.Use(withTimeout(timeout))
		r.Get("/healthz", handle(h.healthz))
		r.Get("/readyz", handle(h.readyz))
		if opts.Metrics != nil {
			r.Method(http.MethodGet, "/metrics", opts.Metrics)
		}
		r.Group(func(r chi.Router) {
			r.Use(publicLimit)
			r.Get("/openapi.json", serveOpenAPI)
			r.Get("/", servePage)
			r.Get("/assets/{name}", serveAsset)
			// Schedules and seat maps are public, as a cinema's programme
			// and seat map are: they name no user.
			r.Get("/schedules", handle(h.listSchedules))
			r.Get("/schedules/{id}", handle(h.getSchedule))
			r.Get("/schedules/{id}/seats", handle(h.seatMap))
		})
		r.Group(func(r chi.Router) {
			r.Use(h.authenticate, h.admit(limitUser, opts.UserLimiter, userKey))
			r.With(requireAdmin).Post("/schedules", handle(h.createSchedule))
			r.With(idempotent).Post("/reservations", handle(h.reserve))
			r.Get("/reservations/{id}", handle(h.getReservation))
			r.With(idempotent).Delete("/reservations/{id}", handle(h.cancelReservation))
			r.With(idempotent).Post("/holds", handle(h.createHold))
			r.Get("/holds/{id}", handle(h.getHold))
			r.With(idempotent).Post("/holds/{id}/confirm", handle(h.confirmHold))
			r.With(idempotent).Post("/holds/{id}/extend", handle(h.extendHold))
			r.Delete("/holds/{id}", handle(h.releaseHold))
			r.With(requireAdmin).Put("/schedules/{id}/queue", handle(h.putQueue))
			r.With(requireAdmin).Get("/schedules/{id}/queue", handle(h.getQueue))
			r.With(requireAdmin).Delete("/schedules/{id}/queue", handle(h.deleteQueue))
			r.Post("/schedules/{id}/queue", handle(h.joinQueue))
			r.Get("/queue/{ticket}", handle(h.getTicket))
			r.Delete("/queue/{ticket}", handle(h.leaveQueue))
			if h.webhooks != nil {
				r.With(requireAdmin).Group(h.webhookRoutes)
			}
		})
	})
	return withScope(r, h.log, opts.AccessLog, observer)
}
