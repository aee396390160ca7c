package httpapi

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// accessLine is one request's access log line. With JSON logs it is
// written straight to the log's writer, with the members and order of
// slog's JSONHandler and strings quoted by jsontext: through the
// JSONHandler (the caller's PC, the record, the handler's formatting) a
// line costs the hot seat several times as much
// (BenchmarkHotSeatRequest; the figures are in docs/performance.md, "The
// HTTP edge").
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

// log writes the line to out in one call, or through log when out is nil
// (text logs).
func (l accessLine) log(ctx context.Context, log *slog.Logger, out io.Writer) {
	ms := float64(l.duration.Microseconds()) / 1000
	if out == nil {
		attrs := make([]slog.Attr, 0, 7)
		attrs = append(attrs, slog.String("request_id", l.id), slog.String("method", l.method),
			slog.String("path", l.path), slog.Int("status", l.status))
		if l.code != "" {
			attrs = append(attrs, slog.String("code", l.code))
		}
		attrs = append(attrs, slog.Int("bytes", l.bytes), slog.Float64("duration_ms", ms))
		log.LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		return
	}
	bp := accessBuffers.Get().(*[]byte)
	b := append((*bp)[:0], `{"time":"`...)
	b = l.at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	// AppendQuote replaces invalid UTF-8 with U+FFFD and says so; the
	// line is written all the same.
	b, _ = jsontext.AppendQuote(b, l.id)
	b = append(b, `,"method":`...)
	b, _ = jsontext.AppendQuote(b, l.method)
	b = append(b, `,"path":`...)
	b, _ = jsontext.AppendQuote(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	if l.code != "" {
		b = append(b, `,"code":`...)
		b, _ = jsontext.AppendQuote(b, l.code)
	}
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	b = append(b, `,"duration_ms":`...)
	b = strconv.AppendFloat(b, ms, 'g', -1, 64)
	b = append(b, "}\n"...)
	_, _ = out.Write(b)
	*bp = b
	accessBuffers.Put(bp)
}
