package tracing

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// lightBatcher is the light spans' batch processor and exporter in one: a
// span is encoded into the open batch as it ends, and a batch is uploaded,
// as one ResourceSpans of one ScopeSpans, when it holds the batch size or
// when the schedule delay has passed, whichever comes first; spans beyond
// the queue size wait for nothing and are dropped. The sizes and delays are
// the SDK's batch processor's, from the same OTEL_BSP_* variables.
type lightBatcher struct {
	client otlptrace.Client
	// resource and scope are their fields' encodings, written once: every
	// batch starts with them (the scope from newBatch on, the resource in
	// the headroom when send finishes it).
	resource, scope []byte
	// scopeTrailer and resourceTrailer are the schema URLs of the scope and
	// of the resource: the fields that follow the spans.
	scopeTrailer, resourceTrailer []byte

	batchSize, queueSize int
	delay, timeout       time.Duration

	mu     sync.Mutex
	open   *lightBatch   // being written, nil until the next span
	full   []*lightBatch // waiting for the uploader
	queued int           // the spans in open and full
	free   []*lightBatch
	closed bool

	wake chan struct{} // a batch is full
	stop chan struct{}
	done chan struct{}
}

// lightBatch is one export's encoding: headroom for its ResourceSpans'
// resource and the length of its ScopeSpans, which only the upload knows,
// then the scope and the spans.
type lightBatch struct {
	b     []byte
	spans int
}

// The SDK's batch processor's defaults.
const (
	defaultScheduleDelay = 5000 * time.Millisecond
	defaultExportTimeout = 30000 * time.Millisecond
	defaultQueueSize     = 2048
	defaultBatchSize     = 512
)

func newLightBatcher(client otlptrace.Client, res *resource.Resource, scope instrumentation.Scope) *lightBatcher {
	l := &lightBatcher{client: client,
		delay:     time.Duration(envInt("OTEL_BSP_SCHEDULE_DELAY", int(defaultScheduleDelay/time.Millisecond))) * time.Millisecond,
		timeout:   time.Duration(envInt("OTEL_BSP_EXPORT_TIMEOUT", int(defaultExportTimeout/time.Millisecond))) * time.Millisecond,
		queueSize: envInt("OTEL_BSP_MAX_QUEUE_SIZE", defaultQueueSize),
		batchSize: envInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", defaultBatchSize),
		wake:      make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if l.batchSize > l.queueSize {
		l.batchSize = min(defaultBatchSize, l.queueSize)
	}
	if l.delay <= 0 {
		l.delay = defaultScheduleDelay
	}
	if res != nil {
		l.resource = appendResource(nil, res)
		l.resourceTrailer = appendString(nil, resourceSpansSchemaURL, res.SchemaURL())
	}
	l.scope = appendScope(nil, scope)
	l.scopeTrailer = appendString(nil, scopeSpansSchemaURL, scope.SchemaURL)
	go l.run()
	return l
}

// envInt reads an OTEL_BSP_* variable as the SDK does: unset or not a
// number, the default.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// headroom is what a batch keeps in front of its scope: the resource, the
// ScopeSpans' tag and its length, at most a varint's ten bytes.
func (l *lightBatcher) headroom() int {
	return len(l.resource) + protowire.SizeTag(resourceSpansScopeSpans) + binary.MaxVarintLen64
}

// add writes the span rec, which has ended, into the open batch.
func (l *lightBatcher) add(rec *spanRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.queued >= l.queueSize {
		return
	}
	if l.open == nil {
		l.open = l.newBatch()
	}
	l.open.b = appendSpan(l.open.b, rec)
	l.open.spans++
	l.queued++
	if l.open.spans >= l.batchSize {
		l.full = append(l.full, l.open)
		l.open = nil
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// newBatch is a free batch or a new one, ready for spans; l.mu is held.
func (l *lightBatcher) newBatch() *lightBatch {
	if n := len(l.free); n > 0 {
		b := l.free[n-1]
		l.free = l.free[:n-1]
		return b
	}
	// About 600 bytes a span: no growth for most batches.
	b := make([]byte, l.headroom(), l.headroom()+len(l.scope)+600*l.batchSize)
	return &lightBatch{b: append(b, l.scope...)}
}

// keptBatches bounds the batches kept for reuse: two are written while a
// third is uploaded.
const keptBatches = 2

func (l *lightBatcher) run() {
	defer close(l.done)
	tick := time.NewTicker(l.delay)
	defer tick.Stop()
	for {
		var due bool
		select {
		case <-l.wake:
		case <-tick.C:
			due = true
		case <-l.stop:
			l.upload(true)
			return
		}
		l.upload(due)
	}
}

// upload sends the full batches, and the open one too when its time has
// come (due).
func (l *lightBatcher) upload(due bool) {
	for {
		l.mu.Lock()
		var batch *lightBatch
		switch {
		case len(l.full) > 0:
			batch = l.full[0]
			l.full = l.full[1:]
		case due && l.open != nil:
			// Once: under load the open batch fills again while it is sent.
			batch, l.open, due = l.open, nil, false
		}
		l.mu.Unlock()
		if batch == nil {
			return
		}
		l.send(batch)
		l.mu.Lock()
		l.queued -= batch.spans
		batch.spans = 0
		batch.b = append(batch.b[:l.headroom()], l.scope...)
		if len(l.free) < keptBatches {
			l.free = append(l.free, batch)
		}
		l.mu.Unlock()
	}
}

// send finishes batch's ResourceSpans in place (its trailers, then the
// resource and the ScopeSpans' length in front) and uploads it.
func (l *lightBatcher) send(batch *lightBatch) {
	head := l.headroom()
	b := append(batch.b, l.scopeTrailer...)
	scopeSpansLen := len(b) - head
	b = append(b, l.resourceTrailer...)
	front := protowire.AppendVarint(protowire.AppendTag(append(make([]byte, 0, head), l.resource...),
		resourceSpansScopeSpans, protowire.BytesType), uint64(scopeSpansLen))
	start := head - len(front)
	copy(b[start:], front)
	batch.b = b
	rs := &tracepb.ResourceSpans{}
	rs.ProtoReflect().SetUnknown(protoreflect.RawFields(b[start:len(b):len(b)]))
	ctx := context.Background()
	if l.timeout > 0 { // none otherwise, as with the SDK's batch processor
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.timeout)
		defer cancel()
	}
	if err := l.client.UploadTraces(ctx, []*tracepb.ResourceSpans{rs}); err != nil {
		otel.Handle(fmt.Errorf("traces export: %w", err))
	}
}

// Shutdown uploads what is left and stops taking spans; the client is
// the provider's, which stops it.
func (l *lightBatcher) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
