package tracing

import (
	"io"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// serverSpans is the middleware of Tracing.Handler. It asks the sampler
// first (sampleFirst) and does a server span's work (the span, its
// attributes, counting the request's and the answer's bytes) only for a
// request the sampler keeps. A dropped request goes on as it came, with no
// span in its context, so its calls skip their spans cheaply too (the
// Redis hook, the pgx tracer, the lock client look for a recording span).
type serverSpans struct {
	next       http.Handler
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// sampler is the provider's; nil for a provider a test gave, whose
	// sampler is unknown: then the SDK's Start alone decides.
	sampler sdktrace.Sampler
	// fields are the propagator's headers, canonical: a request without
	// any has no context to extract.
	fields []string
	// start is made once: each request would allocate it.
	start []trace.SpanStartOption
}

func newServerSpans(next http.Handler, tracer trace.Tracer, sampler sdktrace.Sampler, propagator propagation.TextMapPropagator) *serverSpans {
	s := &serverSpans{next: next, tracer: tracer, propagator: propagator, sampler: sampler,
		start: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}}
	for _, f := range propagator.Fields() {
		s.fields = append(s.fields, http.CanonicalHeaderKey(f))
	}
	return s
}

// untraced are the paths of probes and scrapes: no span of theirs.
func untraced(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

func (s *serverSpans) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if untraced(r.URL.Path) {
		s.next.ServeHTTP(w, r)
		return
	}
	ctx := r.Context()
	carried := s.carriesContext(r.Header)
	if carried {
		ctx = s.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	if s.sampler != nil {
		var kept bool
		if ctx, kept = sampleFirst(ctx, carried, s.sampler, r.Method); !kept {
			s.next.ServeHTTP(w, r)
			return
		}
	}
	// Named by the method until the router knows the route (RouteNames).
	ctx, span := s.tracer.Start(ctx, validUTF8(r.Method), s.start...)
	if !span.IsRecording() {
		s.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	defer span.End()
	attrs := appendRequestAttributes(make([]attribute.KeyValue, 0, 16), r)
	// Deferred after End, this runs before it, on a panic too.
	defer func() { setAttributes(span, attrs...) }()

	body, a := &countingBody{ReadCloser: r.Body}, &answer{ResponseWriter: w, status: http.StatusOK}
	if r.Body != nil && r.Body != http.NoBody {
		// net/http looks at the type of the body it gave once the
		// handler returns: it gets its own back.
		original := r.Body
		r.Body = body
		defer func() { r.Body = original }()
	}
	s.next.ServeHTTP(a, r.WithContext(ctx))
	span.SetStatus(serverStatus(a.status))
	attrs = appendResponseAttributes(attrs, body.read, a.written, a.status)
}

func (s *serverSpans) carriesContext(h http.Header) bool {
	for _, f := range s.fields {
		if _, ok := h[f]; ok {
			return true
		}
	}
	return false
}

// countingBody counts the bytes of a sampled request's body the handler read.
type countingBody struct {
	io.ReadCloser
	read int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	return n, err
}

// answer is the writer of a sampled request: it keeps the status of the
// answer (the first final one, 200 when the handler writes none) and the
// bytes of its body (written from the request's goroutine: no lock). It
// offers http.Flusher, which the live seat map's writer looks for, and
// Unwrap, through which http.ResponseController reaches the others.
type answer struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	written     int64
}

func (a *answer) WriteHeader(code int) {
	a.noteStatus(code)
	a.ResponseWriter.WriteHeader(code)
}

func (a *answer) Write(p []byte) (int, error) {
	a.wroteHeader = true
	n, err := a.ResponseWriter.Write(p)
	a.written += int64(n)
	return n, err
}

// Flush sends what is buffered, when the server's writer can.
func (a *answer) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		a.wroteHeader = true
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the server's writer.
func (a *answer) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// noteStatus keeps the first final status: informational answers (103
// Early Hints) come before it.
func (a *answer) noteStatus(code int) {
	if a.wroteHeader || (code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols) {
		return
	}
	a.wroteHeader = true
	a.status = code
}
