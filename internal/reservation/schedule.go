package reservation

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of a schedule, written once: NewSchedule checks them, the OpenAPI
// document and the hammer use them, and a test checks that the schema's
// CHECK constraints say the same.
const (
	MaxSeatCount  = 100_000
	MaxTitleRunes = 200
)

// The first and last instants a schedule may start at. RFC 3339, and so
// every JSON encoder and most clients' parsers, writes the years 1..9999
// only; a start outside them could be stored but never read back.
var (
	EarliestStart = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	LatestStart   = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_000, time.UTC)
)

// Schedule is one showing with seats numbered 1..SeatCount, laid out in
// rows (Layout).
type Schedule struct {
	id       int64
	title    string
	startsAt time.Time
	layout   Layout
}

// NewSchedule returns a schedule that is not stored yet (ID 0), or every
// field that breaks an invariant, as *InvalidError values joined in one
// error.
func NewSchedule(title string, startsAt time.Time, seatCount int) (Schedule, error) {
	startsAt = storedStart(startsAt)
	errs := checkSchedule(title, startsAt)
	if seatCount < 1 || seatCount > MaxSeatCount {
		errs = append(errs, &InvalidError{Field: "seatCount", Detail: fmt.Sprintf("must be between 1 and %d", MaxSeatCount)})
	}
	if len(errs) > 0 {
		return Schedule{}, errors.Join(errs...)
	}
	return Schedule{title: strings.TrimSpace(title), startsAt: startsAt, layout: SingleRowLayout(seatCount)}, nil
}

// NewLaidOutSchedule is NewSchedule for a venue of rows (NewLayout checks
// them).
func NewLaidOutSchedule(title string, startsAt time.Time, rows []Row) (Schedule, error) {
	layout, err := NewLayout(rows)
	return newScheduleOf(title, startsAt, layout, err)
}

// NewSectionedSchedule is NewSchedule for a venue of sections
// (NewSectionedLayout checks them).
func NewSectionedSchedule(title string, startsAt time.Time, sections []Section) (Schedule, error) {
	layout, err := NewSectionedLayout(sections)
	return newScheduleOf(title, startsAt, layout, err)
}

// newScheduleOf checks title and startsAt, and joins their problems to
// the layout's (invalid).
func newScheduleOf(title string, startsAt time.Time, layout Layout, invalid error) (Schedule, error) {
	startsAt = storedStart(startsAt)
	errs := checkSchedule(title, startsAt)
	if invalid != nil {
		errs = append(errs, invalid)
	}
	if len(errs) > 0 {
		return Schedule{}, errors.Join(errs...)
	}
	return Schedule{title: strings.TrimSpace(title), startsAt: startsAt, layout: layout}, nil
}

// checkSchedule lists what is wrong with a schedule's title and start.
func checkSchedule(title string, startsAt time.Time) []error {
	title = strings.TrimSpace(title)
	var errs []error
	switch {
	case title == "":
		errs = append(errs, &InvalidError{Field: "title", Detail: "must not be blank"})
	case utf8.RuneCountInString(title) > MaxTitleRunes:
		errs = append(errs, &InvalidError{Field: "title", Detail: fmt.Sprintf("must be at most %d characters", MaxTitleRunes)})
	}
	if err := CheckReadableTime("startsAt", startsAt); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// CheckReadableTime names field when t falls outside EarliestStart..
// LatestStart: the one check of every instant the API stores and answers
// (a schedule's start, a queue's opening), which could otherwise be
// stored and never read back.
func CheckReadableTime(field string, t time.Time) error {
	if t.Before(EarliestStart) || t.After(LatestStart) {
		return &InvalidError{Field: field, Detail: "must fall in the years 1 to 9999 in UTC"}
	}
	return nil
}

// storedStart is a start time as it is stored: in UTC, to the microsecond
// (PostgreSQL's precision, truncated here rather than rounded there, so
// that the last microsecond of 9999 stays in 9999).
func storedStart(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// ReadableStart is t moved into EarliestStart..LatestStart: a stored start
// that could not be written as RFC 3339 is read as the nearest one that
// can. NewSchedule refuses such starts and the schema's CHECK forbids
// them; this is the last line, so that reading a schedule never fails
// (and a queue's opening, which CheckReadableTime guards as well).
func ReadableStart(t time.Time) time.Time {
	switch {
	case t.Before(EarliestStart):
		return EarliestStart
	case t.After(LatestStart):
		return LatestStart
	}
	return t
}

// RestoreSchedule rebuilds a stored schedule. Only repositories call it: the
// values were validated when the schedule was created.
func RestoreSchedule(id int64, title string, startsAt time.Time, seatCount int) Schedule {
	return Schedule{id: id, title: title, startsAt: startsAt, layout: SingleRowLayout(seatCount)}
}

// RestoreLaidOutSchedule rebuilds a stored schedule with its layout.
func RestoreLaidOutSchedule(id int64, title string, startsAt time.Time, layout Layout) Schedule {
	return Schedule{id: id, title: title, startsAt: startsAt, layout: layout}
}

func (s Schedule) ID() int64           { return s.id }
func (s Schedule) Title() string       { return s.title }
func (s Schedule) StartsAt() time.Time { return s.startsAt }
func (s Schedule) SeatCount() int      { return s.layout.SeatCount() }
func (s Schedule) Layout() Layout      { return s.layout }

// HasSeat reports whether seatID names one of the schedule's seats.
func (s Schedule) HasSeat(seatID int) bool { return seatID >= 1 && seatID <= s.layout.SeatCount() }
