package tracing

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// RouteNames is chi middleware that names the request's span (the server
// span of Tracing.Handler, in the request's context) "METHOD
// /route/{pattern}" once the request has been routed and answered: the
// route pattern is known only then. An unmatched request keeps the name
// it started with, the method alone. The span also gets http.route and
// the request's X-Request-Id, which the request log carries too.
func RouteNames(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		span := trace.SpanFromContext(r.Context())
		if !span.IsRecording() {
			return
		}
		var pattern string
		if rc := chi.RouteContext(r.Context()); rc != nil {
			pattern = rc.RoutePattern()
		}
		if pattern != "" {
			span.SetName(validUTF8(r.Method + " " + pattern))
		}
		var attrs []attribute.KeyValue
		if id := w.Header().Get("X-Request-Id"); id != "" {
			attrs = append(attrs, AttrRequestID.String(id))
		}
		if pattern != "" {
			attrs = append(attrs, attribute.String("http.route", pattern))
		}
		setAttributes(span, attrs...)
	})
}

// AttrRequestID is the request's X-Request-Id (the request log's id).
const AttrRequestID = attribute.Key("seatlock.request_id")
