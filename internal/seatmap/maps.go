package seatmap

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/seatlock/seatlock/internal/reservation"
)

// Form is a form of the seat map: FormFull, one object per seat, or
// FormCompact, one string of status codes per row.
type Form string

// The seat map's forms (?form=).
const (
	FormFull    Form = "full"
	FormCompact Form = "compact"
)

// ParseForm reads ?form=: "" is FormFull; anything but the two forms is
// an *reservation.InvalidError on "form".
func ParseForm(values []string) (Form, error) {
	switch {
	case len(values) == 0 || len(values) == 1 && (values[0] == "" || values[0] == string(FormFull)):
		return FormFull, nil
	case len(values) == 1 && values[0] == string(FormCompact):
		return FormCompact, nil
	}
	return "", &reservation.InvalidError{Field: "form", Detail: "must be full or compact"}
}

// maxRenderedBytes bounds what Maps keeps; past it, it starts over.
const maxRenderedBytes = 64 << 20

// Maps renders seat maps from seat images and keeps each one, per
// schedule, form and encoding, until its image changes: a thousand clients
// reading a stadium's map between two changes cost one rendering (and one
// compression), and the seat map's GET and the streams' snapshots share
// them.
type Maps struct {
	flight singleflight.Group
	mu     sync.Mutex
	kept   map[mapKey]Rendered
	bytes  int
	// renders counts the renderings (Renders).
	renders atomic.Int64
}

// Renders is how many maps m has rendered.
func (m *Maps) Renders() int64 { return m.renders.Load() }

type mapKey struct {
	schedule int64
	form     Form
	gzip     bool
}

// Rendered is a seat map as sent.
type Rendered struct {
	// Body is the JSON (gzip-compressed when asked for), ending in a
	// newline.
	Body []byte
	// Tag names the image's state: equal tags, equal bodies.
	Tag string
	// LastEvent is the id of the last seat event the map includes ("":
	// not known).
	LastEvent string
}

// ETag is the entity tag of a seat map in form whose image has tag: the
// tag, the form and the encoding.
func ETag(tag string, form Form, gzipped bool) string {
	etag := `"` + tag + "." + string(form[0])
	if gzipped {
		etag += ".gz"
	}
	return etag + `"`
}

// Render returns image's map in form, compressed when gzipped, rendering
// it unless the image has not changed since it last was.
func (m *Maps) Render(image *Image, form Form, gzipped bool) Rendered {
	key := mapKey{image.Schedule().ID(), form, gzipped}
	_, tag := image.Tag()
	m.mu.Lock()
	if r, ok := m.kept[key]; ok && r.Tag == tag {
		m.mu.Unlock()
		return r
	}
	m.mu.Unlock()
	flightKey := strconv.FormatInt(key.schedule, 10) + string(form) + strconv.FormatBool(gzipped) + tag
	v, _, _ := m.flight.Do(flightKey, func() (any, error) {
		r := render(image, form, gzipped)
		m.renders.Add(1)
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.kept == nil || m.bytes+len(r.Body) > maxRenderedBytes {
			m.kept, m.bytes = map[mapKey]Rendered{}, 0
		}
		m.bytes += len(r.Body) - len(m.kept[key].Body)
		m.kept[key] = r
		return r, nil
	})
	return v.(Rendered)
}

// render renders image's current state. A gzipped full form is written
// to the compressor as it is rendered, so only the compressed map is
// ever whole in memory (a stadium's is 0.8 MB, against 8 MB rendered).
func render(image *Image, form Form, gzipped bool) Rendered {
	state := image.State()
	schedule := image.Schedule()
	rendered := Rendered{Tag: state.Tag, LastEvent: state.LastEvent}
	var body []byte
	switch {
	case form == FormCompact:
		body = AppendCompactSeatMap(make([]byte, 0, 64+len(state.Status)*5/4), schedule.ID(), state.Version, schedule.Layout(), state.Status)
	case !gzipped:
		body = AppendSeatMap(make([]byte, 0, 32+len(state.Status)*100), schedule.ID(), schedule.Layout(), state.Status)
	}
	if !gzipped {
		rendered.Body = append(body, '\n')
		return rendered
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // a valid level never fails
	// Writes to a buffer never fail.
	if form == FormCompact {
		_, _ = zw.Write(body)
	} else {
		_ = WriteSeatMap(zw, schedule.ID(), schedule.Layout(), state.Status)
	}
	_, _ = zw.Write([]byte{'\n'})
	_ = zw.Close()
	rendered.Body = buf.Bytes()
	return rendered
}
