package httpapi

import (
	"bytes"
	"io"
	"net/http"
)

// maxIDDigits bounds the ids the fast path reads (an int64 has 19 digits).
const maxIDDigits = 18

// decodeReserve reads a reservation body. The body nearly every booking
// sends, {"scheduleId":N,"seatId":M} with positive ids (in either order,
// with or without spaces), is read by hand: the hammered seat answers
// thousands a second. Anything else, malformed or invalid included, goes
// through decodeJSON and the validator, which give the same answer for the
// common body and the documented errors for the rest.
func (h *handler) decodeReserve(w http.ResponseWriter, r *http.Request) (reserveRequest, *apiError) {
	if isJSONMediaType(r.Header.Get("Content-Type")) && r.ContentLength > 0 && r.ContentLength <= 128 {
		var buf [128]byte
		body := buf[:r.ContentLength]
		if n, err := readFull(r, body); err == nil && n == len(body) {
			if schedule, seat, ok := parseReserveBody(body); ok {
				return reserveRequest{ScheduleID: &schedule, SeatID: &seat}, nil
			}
			r.Body = replayBody(body)
		} else {
			return reserveRequest{}, malformed("The body ended before its Content-Length.")
		}
	}
	var req reserveRequest
	if e := decodeJSON(w, r, &req); e != nil {
		return req, e
	}
	if e := validate(h.validate, &req); e != nil {
		return req, e
	}
	return req, nil
}

// parseReserveBody accepts exactly one object with the members scheduleId
// and seatId, each once, each a positive integer without sign, exponent or
// leading zero, and nothing else but JSON whitespace.
func parseReserveBody(b []byte) (scheduleID int64, seatID int, ok bool) {
	p := parser{b: b}
	p.space()
	if !p.byte('{') {
		return 0, 0, false
	}
	var haveSchedule, haveSeat bool
	for i := 0; i < 2; i++ {
		if i == 1 && !p.byte(',') {
			return 0, 0, false
		}
		p.space()
		name, ok := p.name()
		if !ok || !p.byte(':') {
			return 0, 0, false
		}
		p.space()
		n, ok := p.positive()
		if !ok {
			return 0, 0, false
		}
		switch {
		case name == "scheduleId" && !haveSchedule:
			scheduleID, haveSchedule = n, true
		case name == "seatId" && !haveSeat:
			seatID, haveSeat = int(n), true
		default:
			return 0, 0, false
		}
		p.space()
	}
	if !p.byte('}') {
		return 0, 0, false
	}
	p.space()
	return scheduleID, seatID, p.i == len(p.b) && haveSchedule && haveSeat
}

type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *parser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// name reads a member name made of ASCII letters only (no escapes).
func (p *parser) name() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) && ('a' <= p.b[p.i] && p.b[p.i] <= 'z' || 'A' <= p.b[p.i] && p.b[p.i] <= 'Z') {
		p.i++
	}
	name := string(p.b[start:p.i])
	if !p.byte('"') {
		return "", false
	}
	p.space()
	return name, true
}

// positive reads 1..maxIDDigits digits without a leading zero.
func (p *parser) positive() (int64, bool) {
	start := p.i
	var n int64
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > maxIDDigits || p.b[start] == '0' {
		return 0, false
	}
	// A number must end here: no fraction or exponent.
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	return n, true
}

// readFull reads exactly len(buf) bytes of r's body.
func readFull(r *http.Request, buf []byte) (int, error) {
	return io.ReadFull(r.Body, buf)
}

// replayBody gives a body already read back to the slow path.
func replayBody(b []byte) io.ReadCloser {
	return io.NopCloser(bytes.NewReader(bytes.Clone(b)))
}
