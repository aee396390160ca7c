package main

import (
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The compact form is read a character a seat from each row's first seat;
// the full form a seat an object; anything else is an error.
func TestParseSeatMap(t *testing.T) {
	compact := `{"scheduleId":3,"version":42,"sections":[` +
		`{"name":"101","rows":[{"label":"A","firstSeatId":1,"category":"standard","status":"aah"},{"label":"B","firstSeatId":4,"category":"standard","status":"r"}]},` +
		`{"name":"102","rows":[{"label":"A","firstSeatId":5,"category":"vip","status":"ha"}]}]}`
	m, err := parseSeatMap([]byte(compact))
	want := map[int]string{1: "available", 2: "available", 3: "held", 4: "reserved", 5: "held", 6: "available"}
	if err != nil || m.Form != formCompact || m.Version != 42 || m.ScheduleID != 3 || !maps.Equal(m.Statuses, want) {
		t.Errorf("compact: %+v, %v", m, err)
	}
	full := `{"scheduleId":3,"seats":[{"seatId":1,"status":"held","label":"A1","row":"A","number":1,"category":"standard"},{"seatId":2,"status":"available"}]}`
	m, err = parseSeatMap([]byte(full))
	if err != nil || m.Form != formFull || m.Version != -1 || !maps.Equal(m.Statuses, map[int]string{1: "held", 2: "available"}) {
		t.Errorf("full: %+v, %v", m, err)
	}
	for body, want := range map[string]string{
		`{"scheduleId":3,"sections":[{"name":"","rows":[{"label":"A","firstSeatId":1,"status":"ax"}]}]}`: `status 'x' is not a, h or r`,
		`{"scheduleId":3}`: `neither "seats" nor "sections"`,
		`{"scheduleId":`:   "decode body",
	} {
		if _, err := parseSeatMap([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseSeatMap(%s) = %v, want an error containing %q", body, err, want)
		}
	}
}

// The hammer reads seat maps in the compact form, and in the full one
// from a server that answers only that (as the service did before the
// compact form).
func TestSeatMapEitherForm(t *testing.T) {
	for _, fullOnly := range []bool{false, true} {
		f := newFakeAPI(t)
		f.fullOnly = fullOnly
		urls, _ := f.serve(t, 1)
		a := newAPI(1, 1, 5*time.Second, clientFast)
		defer a.close()
		id := f.addSchedule(5, 2, 4)
		statuses, err := a.seatMap(t.Context(), urls[0], id)
		want := map[int]string{1: "available", 2: "reserved", 3: "available", 4: "reserved", 5: "available"}
		if err != nil || !maps.Equal(statuses, want) {
			t.Errorf("full only %v: %v, %v", fullOnly, statuses, err)
		}
		if _, err := a.seatMap(t.Context(), urls[0], id+1); err == nil || !strings.Contains(err.Error(), "HTTP 404 schedule_not_found") {
			t.Errorf("full only %v: unknown schedule: %v", fullOnly, err)
		}
	}
}

// The seat map's bytes on the wire are those of the gzip-compressed body
// as it came, with either client (net/http decompresses only what it
// asked to be compressed itself); a server that does not compress, or
// has no compact form, is reported as such.
func TestSeatMapWire(t *testing.T) {
	for _, client := range []string{clientFast, clientStd} {
		f := newFakeAPI(t)
		urls, _ := f.serve(t, 1)
		a := newAPI(1, 1, 5*time.Second, client)
		defer a.close()
		id := f.addSchedule(2000, 2, 4)
		sizes := a.seatMapWires(t.Context(), urls[0], id)
		compact, full := sizes[0], sizes[1]
		f.mu.Lock()
		wantCompact, wantFull := len(f.schedules[id].compactJSON(id)), len(f.schedules[id].fullJSON(id))
		f.mu.Unlock()
		if compact.Form != formCompact || compact.FormSeen != formCompact || compact.Encoding != "gzip" || compact.Decoded != wantCompact ||
			compact.Bytes <= 0 || compact.Bytes >= compact.Decoded || compact.Error != "" {
			t.Errorf("%s: compact %+v, want %d bytes gzip-compressed", client, compact, wantCompact)
		}
		if full.Form != formFull || full.FormSeen != formFull || full.Encoding != "gzip" || full.Decoded != wantFull ||
			full.Bytes >= full.Decoded || full.Bytes <= compact.Bytes || full.Error != "" {
			t.Errorf("%s: full %+v, want %d bytes gzip-compressed, more than the compact form's", client, full, wantFull)
		}
		if got := compact.String(); !strings.HasPrefix(got, "compact ") || !strings.Contains(got, " B gzip (") {
			t.Errorf("%s: %q", client, got)
		}

		f.noGzip, f.fullOnly = true, true
		compact = a.seatMapWire(t.Context(), urls[0], id, formCompact)
		if compact.Encoding != "" || compact.Bytes != wantFull || compact.Decoded != wantFull || compact.FormSeen != formFull ||
			compact.String() != "compact: the full form answered, "+strconv.Itoa(wantFull)+" B, not compressed" {
			t.Errorf("%s: uncompressed full form for compact: %+v %q", client, compact, compact.String())
		}
		if w := a.seatMapWire(t.Context(), urls[0], id+1, formCompact); w.Error != "HTTP 404" {
			t.Errorf("%s: unknown schedule: %+v", client, w)
		}
	}
}
