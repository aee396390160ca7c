package httpapi

import (
	"strings"
	"time"
)

// parseDateTime reads an RFC 3339 date-time. time.Parse alone is both
// stricter and looser than the RFC: it refuses the lower-case t and z the
// RFC allows, and takes offsets the RFC has not (+24:00, +01:60).
func parseDateTime(s string) (time.Time, bool) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case 't':
			return 'T'
		case 'z':
			return 'Z'
		}
		return r
	}, s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	if !strings.HasSuffix(s, "Z") {
		// time.Parse has checked the form ±hh:mm.
		offset := s[len(s)-5:]
		if offset[:2] > "23" || offset[3:] > "59" {
			return time.Time{}, false
		}
	}
	return t, true
}
