package tracing

// The attributes and scalars of the OTLP encoding (wire.go).

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// appendKeyValue writes a KeyValue. A scalar's sizes are known before it
// is written: its message's lengths go first, with no content to move
// (closeField), which halves the cost of a span's attributes.
func appendKeyValue(b []byte, field protowire.Number, kv attribute.KeyValue) []byte {
	var str string
	var scalar int // the AnyValue's size: its oneof's tag and value
	switch kv.Value.Type() {
	case attribute.STRING:
		str = validUTF8(kv.Value.AsString())
		scalar = protowire.SizeTag(anyString) + protowire.SizeBytes(len(str))
	case attribute.INT64:
		scalar = protowire.SizeTag(anyInt) + protowire.SizeVarint(uint64(kv.Value.AsInt64()))
	case attribute.BOOL:
		scalar = protowire.SizeTag(anyBool) + 1
	case attribute.FLOAT64:
		scalar = protowire.SizeTag(anyDouble) + 8
	default:
		return appendComposite(b, field, kv)
	}
	key := validUTF8(string(kv.Key))
	size := protowire.SizeTag(keyValueValue) + protowire.SizeBytes(scalar)
	if key != "" {
		size += protowire.SizeTag(keyValueKey) + protowire.SizeBytes(len(key))
	}
	b = appendVarint7(appendTag(b, field, protowire.BytesType), size)
	if key != "" {
		b = appendVarint7(appendTag(b, keyValueKey, protowire.BytesType), len(key))
		b = append(b, key...)
	}
	b = appendVarint7(appendTag(b, keyValueValue, protowire.BytesType), scalar)
	switch kv.Value.Type() {
	case attribute.STRING:
		b = appendVarint7(appendTag(b, anyString, protowire.BytesType), len(str))
		return append(b, str...)
	case attribute.INT64:
		return appendOneofInt(b, kv.Value.AsInt64())
	case attribute.BOOL:
		return appendOneofBool(b, kv.Value.AsBool())
	}
	return appendOneofDouble(b, kv.Value.AsFloat64())
}

// appendTag and appendVarint7 are protowire's AppendTag and AppendVarint
// with the attributes' common case inline: a field number below 16, a
// length below 128, one byte each.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	if num < 16 {
		return append(b, byte(num)<<3|byte(typ))
	}
	return protowire.AppendTag(b, num, typ)
}

func appendVarint7(b []byte, n int) []byte {
	if n >= 0 && n < 0x80 {
		return append(b, byte(n))
	}
	return protowire.AppendVarint(b, uint64(n))
}

// appendComposite writes a KeyValue of any type, measured once written.
func appendComposite(b []byte, field protowire.Number, kv attribute.KeyValue) []byte {
	b, at := openField(b, field)
	b = appendString(b, keyValueKey, string(kv.Key))
	b = appendValue(b, keyValueValue, kv.Value)
	return closeField(b, at)
}

// appendValue writes an AnyValue. Its value is a oneof, written even when
// zero (false, 0, ""): a oneof's presence is its own.
func appendValue(b []byte, field protowire.Number, v attribute.Value) []byte {
	b, at := openField(b, field)
	switch v.Type() {
	case attribute.BOOL:
		b = appendOneofBool(b, v.AsBool())
	case attribute.INT64:
		b = appendOneofInt(b, v.AsInt64())
	case attribute.FLOAT64:
		b = appendOneofDouble(b, v.AsFloat64())
	case attribute.STRING:
		b = appendOneofString(b, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, anyBytes, protowire.BytesType)
		b = protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), appendOneofBool)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), appendOneofInt)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), appendOneofDouble)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), appendOneofString)
	case attribute.SLICE:
		b = appendList(b, anyArray, v.AsSlice(), func(b []byte, x attribute.Value) []byte {
			return appendValue(b, arrayValues, x)
		})
	case attribute.MAP:
		b = appendList(b, anyKvlist, v.AsMap(), func(b []byte, kv attribute.KeyValue) []byte {
			return appendKeyValue(b, kvlistValues, kv)
		})
	case attribute.EMPTY:
	default:
		b = appendOneofString(b, "INVALID")
	}
	return closeField(b, at)
}

// appendList writes field, an ArrayValue or KeyValueList, of items.
func appendList[T any](b []byte, field protowire.Number, items []T, appendItem func([]byte, T) []byte) []byte {
	b, at := openField(b, field)
	for _, x := range items {
		b = appendItem(b, x)
	}
	return closeField(b, at)
}

// appendArray writes an ArrayValue of xs, each in an AnyValue of its own.
func appendArray[T any](b []byte, xs []T, appendOneof func([]byte, T) []byte) []byte {
	return appendList(b, anyArray, xs, func(b []byte, x T) []byte {
		b, el := openField(b, arrayValues)
		return closeField(appendOneof(b, x), el)
	})
}

func appendOneofString(b []byte, x string) []byte {
	b = protowire.AppendTag(b, anyString, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(x))
}

func appendOneofBool(b []byte, x bool) []byte {
	b = protowire.AppendTag(b, anyBool, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(x))
}

func appendOneofInt(b []byte, x int64) []byte {
	b = protowire.AppendTag(b, anyInt, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(x))
}

func appendOneofDouble(b []byte, x float64) []byte {
	b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(x))
}

// openField writes the tag of an embedded message and returns where its
// content starts; closeField, once the content is written, puts its
// length in front of it. Moving the content by the length's few bytes
// costs less than measuring every message before writing it.
func openField(b []byte, field protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return b, len(b)
}

func closeField(b []byte, start int) []byte {
	n := len(b) - start
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size)...)
	copy(b[start+size:], b[start:start+n])
	protowire.AppendVarint(b[start:start], uint64(n))
	return b
}

// validUTF8 is s with each invalid UTF-8 sequence replaced by U+FFFD. A
// protobuf string must be UTF-8, and a collector refuses a request with one
// that is not: its every span would be lost. The SDK's exporter cannot
// even marshal such a request, and the attributes of a server span are
// what the client sent (its User-Agent, its path), any bytes at all.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// The proto3 scalars below are left out when zero, as proto.Marshal does.

func appendString(b []byte, field protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(s))
}

func appendBytes(b []byte, field protowire.Number, p []byte) []byte {
	if len(p) == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func appendVarint(b []byte, field protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendTime(b []byte, field protowire.Number, t time.Time) []byte {
	nanos := uint64(max(0, t.UnixNano()))
	if nanos == 0 {
		return b
	}
	b = protowire.AppendTag(b, field, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, nanos)
}

// kindNumber is OTLP's Span.SpanKind for the API's kind: the same numbers,
// and 0 (unspecified) for anything else.
func kindNumber(k trace.SpanKind) uint64 {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return uint64(k)
	}
	return 0
}

// statusNumber is OTLP's Status.StatusCode: 1 ok, 2 error, 0 unset.
func statusNumber(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func flags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

func count(n int) uint64 {
	return uint64(min(max(n, 0), math.MaxUint32))
}
