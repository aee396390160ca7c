// Package seatmap is this instance's seat map: the image of a schedule's
// seats (Image: a status code a seat, at a version), how it is kept
// current (Images: by the seat feed's events, or by listing the seats
// from PostgreSQL) and how it is rendered (Maps; AppendSeat, the one
// writer of a seat's JSON). The seat map's GET, its live stream and best
// available (reservation.SeatImages) read it instead of PostgreSQL.
package seatmap

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
)

// expectedTTL is how long an image shows a change this instance made
// before its seat event arrives: longer than the relay and the feed take.
const expectedTTL = 5 * time.Second

// Seat status codes, one byte a seat: what an Image keeps and the compact
// seat map sends.
const (
	CodeAvailable byte = 'a'
	CodeHeld      byte = 'h'
	CodeReserved  byte = 'r'
)

// Code is status's one-byte code.
func Code(status reservation.SeatStatus) byte {
	switch status {
	case reservation.SeatHeld:
		return CodeHeld
	case reservation.SeatReserved:
		return CodeReserved
	}
	return CodeAvailable
}

// StatusOf is the status a code stands for (available for any other
// byte).
func StatusOf(code byte) reservation.SeatStatus {
	switch code {
	case CodeHeld:
		return reservation.SeatHeld
	case CodeReserved:
		return reservation.SeatReserved
	}
	return reservation.SeatAvailable
}

// Image is what this instance knows of a schedule's seats: one status code
// a seat, at a version that grows with every change it takes in. Images
// loads it and keeps it current.
type Image struct {
	schedule reservation.Schedule

	mu     sync.RWMutex
	status []byte // status[id-1] is seat id's code
	// version counts the changes the image holds; stamp is what, with
	// it, names this state on every instance that has it (Tag).
	version   int64
	stamp     string
	lastEvent string
	// expected are the changes this instance made whose events have not
	// arrived yet (Expect): shown over status, so that a client reads its
	// own writes on the instance that made them. expectedGen counts them,
	// and own stamps the tags of states that show some.
	expected    map[int]expectedChange
	expectedGen int64
	own         string
	// expecting[id-1] is set while seat id has an expected change: a
	// choice of best seats reads every seat's status (ReadOccupied), so it
	// looks in expected only for the seats this says are there.
	expecting []bool
}

// expectedChange is the last change this instance made to a seat, shown
// until its event arrives.
type expectedChange struct {
	code  byte
	until time.Time
	// pending counts this instance's changes to the seat whose events
	// have not arrived, the last one included: their events come in the
	// order of the changes, so the last change's is the pending-th, and
	// an earlier one with the same status (a release's "available" before
	// a cancellation's) is not it. 0 when the count is not known (the
	// image was loaded again since, at a position that may hold some of
	// them): then the first event with code is taken for it.
	pending int
}

// NewImage returns an image of schedule with every seat available, at
// version 0.
func NewImage(schedule reservation.Schedule) *Image {
	im := &Image{schedule: schedule, status: make([]byte, schedule.SeatCount()), own: strconv.FormatUint(rand.Uint64(), 36)}
	im.statusesOf(im.status, nil)
	return im
}

// Schedule is the schedule the image is of.
func (im *Image) Schedule() reservation.Schedule { return im.schedule }

// Reset replaces the image's statuses with occupied (every other seat
// available) at version. lastEvent is the id of the last seat event
// occupied includes ("" when it follows no events); stamp, with the
// version, names the state (Tag).
func (im *Image) Reset(version int64, lastEvent, stamp string, occupied []reservation.OccupiedSeat) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.statusesOf(im.status, occupied)
	im.version, im.lastEvent, im.stamp = version, lastEvent, stamp
	im.settleExpected()
}

// statusesOf writes into status, one code a seat of the schedule, the
// statuses of occupied, every other seat available.
func (im *Image) statusesOf(status []byte, occupied []reservation.OccupiedSeat) {
	for i := range status {
		status[i] = CodeAvailable
	}
	for _, s := range occupied {
		if im.schedule.HasSeat(s.ID) {
			status[s.ID-1] = Code(s.Status)
		}
	}
}

// settleExpected drops the expected changes the statuses show already: a
// reload that holds a change holds its event, and the changes after it
// come as events, which the expectation, shown over them, would hide until
// it expired. Of the others, how many events are still to come is no
// longer known. im.mu must be held.
func (im *Image) settleExpected() {
	for seat, e := range im.expected {
		if im.status[seat-1] == e.code {
			im.unexpect(seat)
		} else {
			e.pending = 0
			im.expected[seat] = e
		}
	}
}

// unexpect drops seat's expected change; im.mu must be held.
func (im *Image) unexpect(seat int) {
	delete(im.expected, seat)
	im.expecting[seat-1] = false
}

// Apply takes in events, in order: each one is a change, and a version,
// even when the seat already had that status (every instance counts the
// same changes). stamp is the new state's stamp (Tag).
func (im *Image) Apply(events []seatfeed.Event, stamp string) {
	if len(events) == 0 {
		return
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	for _, ev := range events {
		if im.schedule.HasSeat(ev.SeatID) {
			im.status[ev.SeatID-1] = Code(ev.Status)
		}
		if e, ok := im.expected[ev.SeatID]; ok {
			switch {
			case e.pending > 1: // an earlier change's event
				e.pending--
				im.expected[ev.SeatID] = e
			case e.code == Code(ev.Status):
				im.unexpect(ev.SeatID)
			default: // not the change's event after all: miscounted
				e.pending = 0
				im.expected[ev.SeatID] = e
			}
		}
		im.version++
		im.lastEvent = ev.ID
	}
	im.stamp = stamp
}

// State is a copy of an image at one version.
type State struct {
	Version int64
	// Tag names this state: equal tags, equal statuses, on every instance.
	Tag string
	// LastEvent is the id of the last seat event the state includes; ""
	// when the image follows no events.
	LastEvent string
	// Status is one code a seat, status[id-1] for seat id.
	Status []byte
}

// Expect shows seats with status until their event arrives (or for
// expectedTTL): the service calls it for the changes it has just
// committed, so that the instance that made them shows them at once, on
// its seat map and to its choices of best seats.
func (im *Image) Expect(seats []int, status reservation.SeatStatus) {
	code, until := Code(status), time.Now().Add(expectedTTL)
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.expected == nil {
		im.expected = map[int]expectedChange{}
		im.expecting = make([]bool, len(im.status))
	}
	for _, seat := range seats {
		if !im.schedule.HasSeat(seat) {
			continue
		}
		// A seat with an earlier change of this instance still expected
		// is expected to take this one after the earlier one's event (a
		// hold released, or a booking cancelled, before the hold's or the
		// booking's event came shows undone until the release's or the
		// cancellation's own event arrives), even when the statuses
		// show its status already; any other seat only when they do not.
		e, ok := im.expected[seat]
		switch {
		case ok && e.pending > 0:
			e.pending++
		case im.status[seat-1] == code:
			if ok { // how many events are to come is not known: as after a reload
				im.unexpect(seat)
			}
			continue
		case !ok:
			e.pending = 1
		}
		e.code, e.until = code, until
		im.expected[seat] = e
		im.expecting[seat-1] = true
		im.expectedGen++
	}
}

// showing returns the expected changes still shown; im.mu must be held
// (read locked is enough: expired ones are only skipped).
func (im *Image) showing(now time.Time) int {
	n := 0
	for _, e := range im.expected {
		if e.until.After(now) {
			n++
		}
	}
	return n
}

// Tag returns the image's version and its tag, without copying it.
func (im *Image) Tag() (int64, string) {
	im.mu.RLock()
	defer im.mu.RUnlock()
	shown := im.showing(time.Now())
	return im.version + int64(shown), im.tag(shown)
}

// tag names the state: the version and the stamp, and, when it shows
// expected changes, this image's own stamp and their count, which no other
// instance's tag has.
func (im *Image) tag(shown int) string {
	t := strconv.FormatInt(im.version, 10) + "." + im.stamp
	if shown > 0 {
		t += "~" + im.own + "." + strconv.FormatInt(im.expectedGen, 10)
	}
	return t
}

// LastEvent is the id of the last seat event the image took in; "" when
// it follows no events.
func (im *Image) LastEvent() string {
	im.mu.RLock()
	defer im.mu.RUnlock()
	return im.lastEvent
}

// Position is the image's count of the events it took in (its version,
// less the expected changes it shows) and the id of the last one.
func (im *Image) Position() (events int64, lastEvent string) {
	im.mu.RLock()
	defer im.mu.RUnlock()
	return im.version, im.lastEvent
}

// State copies the image, with the expected changes it shows; its
// version counts them.
func (im *Image) State() State {
	im.mu.RLock()
	defer im.mu.RUnlock()
	now := time.Now()
	shown := im.showing(now)
	status := append([]byte(nil), im.status...)
	for seat, e := range im.expected {
		if e.until.After(now) {
			status[seat-1] = e.code
		}
	}
	return State{Version: im.version + int64(shown), Tag: im.tag(shown), LastEvent: im.lastEvent, Status: status}
}

// ReadOccupied calls read, the image held still, with whether each seat
// is held or reserved as the image shows it at now: its events, and over
// them the changes this instance committed whose events have not arrived
// (so that a seat it held is not chosen again, and one it freed can be
// chosen at once). Best available weighs its choices in read.
func (im *Image) ReadOccupied(now time.Time, read func(occupied func(seat int) bool)) {
	im.mu.RLock()
	defer im.mu.RUnlock()
	read(func(seat int) bool {
		code := im.status[seat-1]
		if im.expecting != nil && im.expecting[seat-1] {
			if e := im.expected[seat]; e.until.After(now) {
				code = e.code
			}
		}
		return code != CodeAvailable
	})
}

// replace sets the statuses to occupied (every other seat available),
// and takes a version more when that changed any of them.
func (im *Image) replace(occupied []reservation.OccupiedSeat, stamp string) {
	next := make([]byte, len(im.status))
	im.statusesOf(next, occupied)
	im.mu.Lock()
	defer im.mu.Unlock()
	if string(next) != string(im.status) {
		im.status = next
		im.version++
	}
	im.stamp = stamp
	im.settleExpected()
}
