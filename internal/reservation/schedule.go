package reservation

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a schedule, written once: the HTTP validation, its messages,
// the OpenAPI document and the hammer use these, and a test checks that the
// schema's CHECK constraints say the same.
const (
	MaxSeatCount  = 2000
	MaxTitleRunes = 200
)

// Schedule is one showing with seats numbered 1..SeatCount.
type Schedule struct {
	id        int64
	title     string
	startsAt  time.Time
	seatCount int
}

// NewSchedule returns a schedule that is not stored yet (ID 0), or an
// *InvalidError naming the first field that breaks an invariant.
func NewSchedule(title string, startsAt time.Time, seatCount int) (Schedule, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return Schedule{}, &InvalidError{Field: "title", Detail: "must not be blank"}
	case utf8.RuneCountInString(title) > MaxTitleRunes:
		return Schedule{}, &InvalidError{Field: "title", Detail: fmt.Sprintf("must be at most %d characters", MaxTitleRunes)}
	case startsAt.IsZero():
		return Schedule{}, &InvalidError{Field: "startsAt", Detail: "is required"}
	case seatCount < 1 || seatCount > MaxSeatCount:
		return Schedule{}, &InvalidError{Field: "seatCount", Detail: fmt.Sprintf("must be between 1 and %d", MaxSeatCount)}
	}
	return Schedule{title: title, startsAt: startsAt, seatCount: seatCount}, nil
}

// RestoreSchedule rebuilds a stored schedule. Only repositories call it: the
// values were validated when the schedule was created.
func RestoreSchedule(id int64, title string, startsAt time.Time, seatCount int) Schedule {
	return Schedule{id: id, title: title, startsAt: startsAt, seatCount: seatCount}
}

func (s Schedule) ID() int64           { return s.id }
func (s Schedule) Title() string       { return s.title }
func (s Schedule) StartsAt() time.Time { return s.startsAt }
func (s Schedule) SeatCount() int      { return s.seatCount }

// HasSeat reports whether seatID names one of the schedule's seats.
func (s Schedule) HasSeat(seatID int) bool { return seatID >= 1 && seatID <= s.seatCount }
