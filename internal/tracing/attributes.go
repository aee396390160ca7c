package tracing

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// gathered are a span's attributes, collected while its work runs and
// given to the span in one SetAttributes when it ends. Each SetAttributes
// of the SDK's span takes the span's lock and grows its slice, and one
// made with the attributes known at the start and another with the
// outcome's copied the first ones into a bigger slice: with every request
// traced, those growths were the biggest part of what tracing allocated.
type gathered struct{ kvs []attribute.KeyValue }

// gatheredPool keeps the slices: the SDK copies the attributes it is
// given, so a slice is free again once they are set.
var gatheredPool = sync.Pool{New: func() any { return &gathered{kvs: make([]attribute.KeyValue, 0, 16)} }}

func gather() *gathered { return gatheredPool.Get().(*gathered) }

func (g *gathered) add(kvs ...attribute.KeyValue) { g.kvs = append(g.kvs, kvs...) }

// setOn gives span the attributes gathered and frees g; deferred right
// after the span's End, it runs before it, on a panic too.
func (g *gathered) setOn(span trace.Span) {
	span.SetAttributes(g.kvs...)
	clear(g.kvs)
	g.kvs = g.kvs[:0]
	gatheredPool.Put(g)
}
