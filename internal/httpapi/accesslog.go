package httpapi

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// accessLine is one request's access log line, written by hand as the JSON
// slog's JSONHandler writes (same members, same order): at a line per
// request, formatting it through slog costs as much as the hot seat's
// whole answer.
type accessLine struct {
	at       time.Time
	id       string
	method   string
	path     string
	status   int
	code     string // the problem's code, if the answer was one
	bytes    int
	duration time.Duration
}

var accessBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// attrs are the line's members for slog, in the same order.
func (l accessLine) attrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.String("request_id", l.id), slog.String("method", l.method),
		slog.String("path", l.path), slog.Int("status", l.status))
	if l.code != "" {
		attrs = append(attrs, slog.String("code", l.code))
	}
	return append(attrs, slog.Int("bytes", l.bytes),
		slog.Float64("duration_ms", float64(l.duration.Microseconds())/1000))
}

// writeTo writes the line to w in one call.
func (l accessLine) writeTo(w io.Writer) {
	bp := accessBuffers.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"time":"`...)
	b = l.at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = appendLogString(b, l.id)
	b = append(b, `,"method":`...)
	b = appendLogString(b, l.method)
	b = append(b, `,"path":`...)
	b = appendLogString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	if l.code != "" {
		b = append(b, `,"code":`...)
		b = appendLogString(b, l.code)
	}
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, float64(l.duration.Microseconds())/1000, 'g', -1, 64)
	b = append(b, "}\n"...)
	_, _ = w.Write(b)
	*bp = b
	accessBuffers.Put(bp)
}

// appendLogString appends s as a JSON string escaped as slog's JSON handler
// escapes it: control characters, quote and backslash; invalid UTF-8 as
// U+FFFD; U+2028 and U+2029 (no HTML escaping).
func appendLogString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		var size int
		b, size = appendNonASCII(b, s[i:])
		i += size
	}
	return append(b, '"')
}
