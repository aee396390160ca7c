package httpapi

// The booking body nearly every client sends, {"scheduleId":N,"seatId":M},
// read by hand: the hot seat's request is answered thousands of times a
// second, and the library's Unmarshal costs it measurably
// (BenchmarkHotSeatRequest; the figures are in docs/performance.md, "The
// HTTP edge"). Anything the hand reading does not take, malformed or
// invalid included, goes through the library and the validator, which
// read this body the same way (FuzzParseReserveBody) and give the
// documented errors for the rest.

// maxIDDigits bounds the ids read by hand (an int64 has 19 digits).
const maxIDDigits = 18

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
		case string(name) == "scheduleId" && !haveSchedule:
			scheduleID, haveSchedule = n, true
		case string(name) == "seatId" && !haveSeat:
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

// name reads a member name made of ASCII letters only (no escapes); the
// name is a slice of the body, so that reading it copies nothing.
func (p *parser) name() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) && ('a' <= p.b[p.i] && p.b[p.i] <= 'z' || 'A' <= p.b[p.i] && p.b[p.i] <= 'Z') {
		p.i++
	}
	name := p.b[start:p.i]
	if !p.byte('"') {
		return nil, false
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
