package main

import (
	"fmt"
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

// judge passes a run only if every seat was won exactly once, every other
// request lost with 409 seat_locked or seat_taken, nothing failed with a 5xx
// or on the wire, and every target's seat map shows each seat reserved.
func judge(r *report, views []seatMapView) verdict {
	var reasons []string
	fail := func(format string, a ...any) { reasons = append(reasons, fmt.Sprintf(format, a...)) }

	if lost := r.Responses[keyNotSent] + r.Responses[keyCanceled]; lost > 0 {
		fail("run interrupted: %d of %d requests not sent or cancelled", lost, r.N)
	}
	for _, s := range r.PerSeat {
		if s.OK != 1 {
			fail("seat %d: %d successful reservations, want exactly 1", s.Seat, s.OK)
		}
	}
	var serverErrors, unexpected []string
	var nServer, nUnexpected int
	for _, k := range sortedKeys(r.Responses) {
		n := r.Responses[k]
		switch status := statusOf(k); {
		case k == keyOK, k == keySeatLocked, k == keySeatTaken, k == keyNotSent, k == keyCanceled:
		case k == keyTransportError:
			fail("%d transport errors (e.g. %s)", n, strings.Join(r.TransportErrors, "; "))
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
		fail("%d responses neither 200 nor 409 seat_locked/seat_taken: %s", nUnexpected, strings.Join(unexpected, ", "))
	}
	if len(views) == 0 && r.Responses[keyNotSent]+r.Responses[keyCanceled] == 0 {
		fail("seat map was not read back")
	}
	for _, v := range views {
		if v.Err != nil {
			fail("seat map via %s: %v", v.Target, v.Err)
			continue
		}
		for _, seat := range r.Seats {
			if st, ok := v.Statuses[seat]; !ok {
				fail("seat map via %s has no seat %d", v.Target, seat)
			} else if st != "reserved" {
				fail("seat map via %s says seat %d is %q, want reserved", v.Target, seat, st)
			}
		}
	}

	if len(reasons) > maxReasons {
		more := len(reasons) - maxReasons
		reasons = append(reasons[:maxReasons], fmt.Sprintf("... and %d more", more))
	}
	return verdict{Pass: len(reasons) == 0, Reasons: reasons}
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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if s := statusOf(k); s > 0 {
			return s
		}
		return 1000
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys
}
