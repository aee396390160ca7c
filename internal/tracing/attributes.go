package tracing

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
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

// setOn gives span the attributes gathered, their invalid UTF-8 replaced
// (validAttribute), and frees g; deferred right after the span's End, it
// runs before it, on a panic too.
func (g *gathered) setOn(span trace.Span) {
	for i, kv := range g.kvs {
		g.kvs[i] = validAttribute(kv)
	}
	span.SetAttributes(g.kvs...)
	clear(g.kvs)
	g.kvs = g.kvs[:0]
	gatheredPool.Put(g)
}

// validUTF8 is s with each invalid UTF-8 sequence replaced by U+FFFD. An
// OTLP string must be UTF-8: the SDK's exporter fails to marshal a batch
// with one span that is not, and the batch is lost. The strings of the
// service's spans that come from outside (a request's path, host, user
// agent, forwarded address and id; an error's message) may be any bytes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// validAttribute is kv with its string, or each of its strings, valid UTF-8.
func validAttribute(kv attribute.KeyValue) attribute.KeyValue {
	switch kv.Value.Type() {
	case attribute.STRING:
		if s := kv.Value.AsString(); !utf8.ValidString(s) {
			return kv.Key.String(validUTF8(s))
		}
	case attribute.STRINGSLICE:
		if ss := kv.Value.AsStringSlice(); slices.ContainsFunc(ss, func(s string) bool { return !utf8.ValidString(s) }) {
			for i, s := range ss {
				ss[i] = validUTF8(s)
			}
			return kv.Key.StringSlice(ss)
		}
	}
	return kv
}

// recordError records err on span as the SDK's RecordError does (an
// exception event with the error's type and message), its message valid
// UTF-8.
func recordError(span trace.Span, err error) {
	msg := err.Error()
	if utf8.ValidString(msg) {
		span.RecordError(err)
		return
	}
	typ := reflect.TypeOf(err)
	name := typ.String()
	if typ.PkgPath() != "" || typ.Name() != "" {
		name = fmt.Sprintf("%s.%s", typ.PkgPath(), typ.Name())
	}
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(name), semconv.ExceptionMessage(validUTF8(msg))))
}
