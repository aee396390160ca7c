package httpapi

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
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
	b = appendLogTime(b, l.at)
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
	b = appendMillis(b, l.duration)
	b = append(b, "}\n"...)
	_, _ = out.Write(b)
	*bp = b
	accessBuffers.Put(bp)
}

// logSecond is the second of the latest access line, formatted: the lines
// of one second share all of their time but its fraction, and formatting
// it whole for each line was a third of the line's cost on the hot seat.
type logSecond struct {
	unix   int64
	loc    *time.Location
	prefix string // up to the seconds, as time.RFC3339Nano has them
	zone   string // "Z" or the offset
}

var lastLogSecond atomic.Pointer[logSecond]

// appendLogTime appends t as t.AppendFormat(b, time.RFC3339Nano) does.
func appendLogTime(b []byte, t time.Time) []byte {
	s := lastLogSecond.Load()
	if s == nil || s.unix != t.Unix() || s.loc != t.Location() {
		s = &logSecond{unix: t.Unix(), loc: t.Location(),
			prefix: t.Format("2006-01-02T15:04:05"), zone: t.Format("Z07:00")}
		lastLogSecond.Store(s)
	}
	b = append(b, s.prefix...)
	b = appendFraction(b, t.Nanosecond(), 9)
	return append(b, s.zone...)
}

// appendMillis appends d in milliseconds to the microsecond, the value of
// strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'g', -1, 64)
// without its float formatting (and without its exponent from a thousand
// seconds on).
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Microseconds()
	if us < 0 {
		return strconv.AppendFloat(b, float64(us)/1000, 'g', -1, 64)
	}
	b = strconv.AppendInt(b, us/1000, 10)
	return appendFraction(b, int(us%1000), 3)
}

// appendFraction appends the fraction v / 10^digits (0 <= v < 10^digits,
// digits <= 9) as a decimal point and its digits without trailing zeros,
// and nothing when v is 0: how time.RFC3339Nano writes nanoseconds, and
// strconv's shortest formatting a fraction of milliseconds.
func appendFraction(b []byte, v, digits int) []byte {
	if v == 0 {
		return b
	}
	var f [10]byte
	f[0] = '.'
	for i := digits; i > 0; i-- {
		f[i] = byte('0' + v%10)
		v /= 10
	}
	n := digits + 1
	for f[n-1] == '0' {
		n--
	}
	return append(b, f[:n]...)
}
