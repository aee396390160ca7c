package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// verdict says whether the service held the line, and if not, why.
type verdict struct {
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons,omitempty"`
}

// maxReasons keeps a failure readable when thousands of seats fail alike.
const maxReasons = 20

// judge passes a run only if every hammered seat was won as its scenario
// says (contended: exactly once; fresh-seats: by its one request; hot-seat:
// never, it was booked before), every other answer was an expected 409,
// nothing failed with a 5xx or on the wire, and, when checked, every
// target's seat map shows each hammered seat reserved and every booking
// answered 200 reads back as answered. With -allow-unavailable, 503
// unavailable answers pass, a seat refused so need not be won (nor be
// reserved: the refusal may have come after the commit), and the run must
// not end unavailable.
func judge(r *report, views []seatMapView) verdict {
	var reasons, seatReasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }
	// The reasons of single seats come last: thousands of seats refused
	// alike must not hide, past maxReasons, why they were.
	failSeat := func(format string, a ...any) { seatReasons = append(seatReasons, fmt.Sprintf(format, a...)) }
	interrupted := r.Responses[keyNotSent] + r.Responses[keyCanceled]
	if interrupted > 0 {
		fail("run interrupted: %d requests not sent or cancelled", interrupted)
	}
	// refused reports whether a seat not won may be so: its requests were
	// refused as unavailable, which -allow-unavailable lets pass.
	refused := func(s seatReport) bool { return r.AllowUnavailable && s.OK == 0 && s.Unavailable > 0 }
	for _, s := range r.allSeats {
		switch want := wantWins(r.Scenario); {
		case s.OK != want && !refused(s):
			failSeat("seat %d of schedule %d: %d successful reservations, want %d", s.Seat, s.Schedule, s.OK, want)
		case r.Scenario == scenarioFreshSeats && s.Requests != 1:
			failSeat("seat %d of schedule %d: %d requests, want 1 (fresh seats)", s.Seat, s.Schedule, s.Requests)
		}
	}
	judgeWatch(r.Watch, fail)
	judgeWebhooks(r.Webhooks, fail)
	judgeResponses(r.Responses, func(k string) bool {
		return expected(r.Scenario, k) || k == keyNotSent || k == keyCanceled || r.AllowUnavailable && k == keyUnavailable
	}, string(r.Scenario), r.TransportErrs, fail)
	if r.AllowUnavailable && r.stillUnavailable && interrupted == 0 {
		fail("the run ended unavailable: no answer it expects came after the last of its %d 503 unavailable", r.Unavailable)
	}
	judgeAcknowledged(r.Acknowledged, fail)
	if r.SeatMapChecked && len(views) == 0 && interrupted == 0 {
		fail("seat map was not read back")
	}
	for _, v := range views {
		if v.Err != nil {
			fail("seat map of schedule %d via %s: %v", v.Schedule, v.Target, v.Err)
		}
	}
	for _, s := range r.allSeats {
		for _, v := range views {
			if v.Schedule != s.Schedule || v.Err != nil {
				continue
			}
			if st, ok := v.Statuses[s.Seat]; !ok {
				failSeat("seat map via %s has no seat %d of schedule %d", v.Target, s.Seat, s.Schedule)
			} else if st != "reserved" && (!refused(s) || st != "available") {
				failSeat("seat map via %s says seat %d of schedule %d is %q, want reserved", v.Target, s.Seat, s.Schedule, st)
			}
		}
	}

	reasons = append(reasons, seatReasons...)
	return verdict{Pass: len(reasons) == 0, Reasons: capReasons(reasons)}
}

// judgeWatch fails what -watch found wrong (nothing when wr is nil):
// events that never came, a stream that failed, reading-only streams
// that ended early.
func judgeWatch(wr *watchReport, fail func(string, ...any)) {
	if wr == nil {
		return
	}
	if len(wr.Missing) > 0 {
		what := "bookings"
		if wr.Status == "held" {
			what = "held seats"
		}
		fail("%d %s never had their event on %s's stream (e.g. schedule/seat %s)", len(wr.Missing), what, wr.Target, wr.Missing[0])
	}
	if wr.Error != "" {
		fail("watching the stream: %s", wr.Error)
	}
	if wr.Dropped > 0 {
		fail("%d reading-only streams ended before the run did", wr.Dropped)
	}
}

// judgeAcknowledged fails bookings answered 200 that did not read back
// as answered (lost), or could not be read at all (nothing when ar is nil:
// not checked).
func judgeAcknowledged(ar *ackReport, fail func(string, ...any)) {
	if ar == nil || ar.Lost+ar.Unchecked == 0 {
		return
	}
	fail("of %d bookings answered 200, %d lost (not read back as answered) and %d not read back: %s",
		ar.Checked, ar.Lost, ar.Unchecked, strings.Join(ar.Examples, "; "))
}

// capReasons keeps the first maxReasons reasons and says how many more
// there were.
func capReasons(reasons []string) []string {
	if len(reasons) > maxReasons {
		more := len(reasons) - maxReasons
		reasons = append(reasons[:maxReasons], fmt.Sprintf("... and %d more", more))
	}
	return reasons
}

// judgeResponses fails the answers of the status histogram responses that
// allowed does not allow, for what (a scenario or a phase): transport
// errors (samples says some), 5xx responses, and any other.
func judgeResponses(responses map[string]int, allowed func(key string) bool, what string, samples []string, fail func(string, ...any)) {
	var serverErrors, unexpected []string
	var nServer, nUnexpected int
	for _, k := range sortedKeys(responses) {
		n := responses[k]
		switch status := statusOf(k); {
		case allowed(k):
		case k == keyTransportError:
			fail("%d transport errors (e.g. %s)", n, strings.Join(samples, "; "))
		case status >= 500:
			nServer += n
			serverErrors = append(serverErrors, fmt.Sprintf("%s ×%d", k, n))
		default:
			nUnexpected += n
			unexpected = append(unexpected, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	if nServer > 0 {
		fail("%d 5xx responses: %s", nServer, strings.Join(serverErrors, ", "))
	}
	if nUnexpected > 0 {
		fail("%d unexpected responses for %s: %s", nUnexpected, what, strings.Join(unexpected, ", "))
	}
}

// wantWins is how many requests of the run must win each hammered seat.
func wantWins(s scenario) int {
	if s == scenarioHotSeat {
		return 0 // booked before the clock started
	}
	return 1
}

// expected reports whether an answer is one the scenario allows: a hot
// seat is refused (seat_taken is the truth, seat_locked allowed), a fresh
// seat is booked, a contended seat is either.
func expected(s scenario, key string) bool {
	switch s {
	case scenarioHotSeat:
		return key == keySeatTaken || key == keySeatLocked
	case scenarioFreshSeats:
		return key == keyOK
	default:
		return key == keyOK || key == keySeatTaken || key == keySeatLocked
	}
}

// statusOf is the HTTP status a histogram key starts with, 0 for keys
// without one (transport errors and the like).
func statusOf(key string) int {
	head, _, _ := strings.Cut(key, " ")
	status, err := strconv.Atoi(head)
	if err != nil {
		return 0
	}
	return status
}

// sortedKeys orders histogram keys by status, keys without a status last.
func sortedKeys(m map[string]int) []string {
	rank := func(k string) int {
		if s := statusOf(k); s > 0 {
			return s
		}
		return 1000
	}
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
}
