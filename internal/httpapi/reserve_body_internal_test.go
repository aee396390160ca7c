package httpapi

import (
	"testing"
)

// slowDecode is what decodeJSON and the validator make of a body: the ids,
// or ok false when they refuse it.
func slowDecode(body []byte) (scheduleID int64, seatID int, ok bool) {
	var req reserveRequest
	if decodeBody(body, &req) != nil || validate(newValidator(), &req) != nil {
		return 0, 0, false
	}
	return *req.ScheduleID, *req.SeatID, true
}

// The hand-read body is only ever one the slow path reads the same way;
// everything else falls through to it.
func FuzzParseReserveBody(f *testing.F) {
	for _, seed := range []string{
		`{"scheduleId":7,"seatId":42}`, `{"seatId":42,"scheduleId":7}`, ` { "scheduleId" : 7 , "seatId" : 42 } ` + "\n",
		"{\t\"scheduleId\":7,\r\n\"seatId\":1}", `{"scheduleId":0,"seatId":1}`, `{"scheduleId":-7,"seatId":1}`,
		`{"scheduleId":007,"seatId":1}`, `{"scheduleId":7.0,"seatId":1}`, `{"scheduleId":7e2,"seatId":1}`,
		`{"scheduleId":7,"seatId":1,"x":1}`, `{"scheduleId":7,"scheduleId":8,"seatId":1}`, `{"ScheduleId":7,"seatId":1}`,
		`{"scheduleId":"7","seatId":1}`, `{"scheduleId":7}`, `{"scheduleId":7,"seatId":1}{}`, `{"scheduleId":7,"seatId":1}x`,
		`{"scheduleId":999999999999999999,"seatId":1}`, `{"scheduleId":9999999999999999999,"seatId":1}`,
		`{"scheduleId":7,"seatId":99999999999}`, `{"sched\u0075leId":7,"seatId":1}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		schedule, seat, fast := parseReserveBody(body)
		if !fast {
			return
		}
		wantSchedule, wantSeat, ok := slowDecode(body)
		if !ok || wantSchedule != schedule || wantSeat != seat {
			t.Fatalf("%q: fast path read (%d, %d); the slow path reads (%d, %d, accepted %v)", body, schedule, seat, wantSchedule, wantSeat, ok)
		}
	})
}

// The fast path takes the bodies clients send.
func TestParseReserveBodyTakesTheUsualBodies(t *testing.T) {
	for _, body := range []string{`{"scheduleId":7,"seatId":42}`, `{"seatId":42,"scheduleId":7}`, ` { "scheduleId" : 7 , "seatId" : 42 } `} {
		if s, seat, ok := parseReserveBody([]byte(body)); !ok || s != 7 || seat != 42 {
			t.Errorf("%s: (%d, %d, %v), want (7, 42, true)", body, s, seat, ok)
		}
	}
}
