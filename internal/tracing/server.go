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
// first and does a server span's work (the span, its attributes, the
// counting of the request's and the answer's bytes, its status) only for
// a request the sampler keeps: under load most requests are not sampled,
// and they should cost tracing next to nothing. An unsampled request goes
// on as it came, with no span in its context, so that the spans of its
// calls are skipped cheaply too (the Redis hook, the pgx tracer, the lock
// client look for a recording span first).
type serverSpans struct {
	next       http.Handler
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// sampler is the provider's, asked before the span is started
	// (sampleFirst); the SDK's Start asks it again. nil for a provider a test gave, whose sampler is
	// unknown: then the SDK's Start decides, and an unsampled request goes
	// on with its non-recording span.
	sampler sdktrace.Sampler
	// fields are the propagator's headers, canonical: a request that
	// carries none of them has no context to extract, and is not parsed.
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
	// Named by the method until the router knows the route (RouteNames).
	var span trace.Span
	if s.sampler != nil {
		look, kept := sampleFirst(ctx, carried, s.sampler, r.Method)
		if !kept {
			s.next.ServeHTTP(w, r)
			return
		}
		ctx, span = s.tracer.Start(look.withDrawnID(ctx), validUTF8(r.Method), s.start...)
	} else {
		ctx, span = s.tracer.Start(ctx, validUTF8(r.Method), s.start...)
	}
	if !span.IsRecording() {
		s.next.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	defer span.End()
	attrs := appendRequestAttributes(make([]attribute.KeyValue, 0, 16), r)
	// Deferred after End, this runs before it, on a panic too.
	defer func() { setAttributes(span, attrs...) }()

	x := &exchange{body: countingBody{ReadCloser: r.Body}, answer: answer{status: http.StatusOK}}
	if r.Body != nil && r.Body != http.NoBody {
		// net/http looks at the type of the body it gave once the
		// handler returns: it gets its own back.
		original := r.Body
		r.Body = &x.body
		defer func() { r.Body = original }()
	}
	x.answer.ResponseWriter = w
	s.next.ServeHTTP(&x.answer, r.WithContext(ctx))

	span.SetStatus(serverStatus(x.answer.status))
	attrs = appendResponseAttributes(attrs, x.body.read, x.answer.written, x.answer.status)
}

func (s *serverSpans) carriesContext(h http.Header) bool {
	for _, f := range s.fields {
		if _, ok := h[f]; ok {
			return true
		}
	}
	return false
}

// exchange is what a sampled request read and was answered, in one
// allocation: its body's counter and its writer.
type exchange struct {
	body   countingBody
	answer answer
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
// bytes of its body. The service's handlers write their answers, streams
// included, from the request's own goroutine: no lock. Of the writer's
// optional interfaces it offers http.Flusher, which the live seat map's
// writer looks for, and Unwrap, through which http.ResponseController
// reaches the others (hijacking, deadlines).
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
