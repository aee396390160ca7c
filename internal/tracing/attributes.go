package tracing

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// setAttributes is where the service's own spans get their attributes:
// each string's invalid UTF-8 is replaced first (validAttribute).
func setAttributes(span trace.Span, kvs ...attribute.KeyValue) {
	for i, kv := range kvs {
		kvs[i] = validAttribute(kv)
	}
	span.SetAttributes(kvs...)
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
	if msg := err.Error(); !utf8.ValidString(msg) {
		span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
			semconv.ExceptionType(fmt.Sprintf("%T", err)), semconv.ExceptionMessage(validUTF8(msg))))
		return
	}
	span.RecordError(err)
}
