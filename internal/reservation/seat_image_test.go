package reservation_test

import (
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
)

// A change this instance made and then found in a reload of the image
// (the feed's, after a gap) is no longer expected: the image shows the
// changes after it as their events come, not the old change over them
// until it expires. Here: a hold made here, reloaded, then confirmed on
// another instance.
func TestReloadedImageShowsTheChangesAfterAnExpectedOne(t *testing.T) {
	t.Parallel()
	image := imageExpectingAHold(t)
	image.Reset(1, "1-0", "1-0", []reservation.OccupiedSeat{{ID: 2, Status: reservation.SeatHeld}})
	image.Apply([]reservation.SeatEvent{{ID: "2-0", SeatID: 2, Status: reservation.SeatReserved}}, "2-0")

	state := image.State()
	if got := string(state.Status); got != "ara" {
		t.Errorf("seats %q after the confirmation's event, want %q (seat 2 reserved)", got, "ara")
	}
	if state.Version != 2 || state.Tag != "2.2-0" {
		t.Errorf("version %d, tag %q: want 2 and the tag every instance has, 2.2-0", state.Version, state.Tag)
	}
}

// A reload that does not hold an expected change yet (the listing ran
// before it was committed) keeps showing it until its event comes.
func TestReloadedImageKeepsAnExpectedChangeItDoesNotHoldYet(t *testing.T) {
	t.Parallel()
	image := imageExpectingAHold(t)
	image.Reset(0, "", "0", nil)
	if got := string(image.State().Status); got != "aha" {
		t.Errorf("seats %q after a reload without the hold, want %q (seat 2 held, as expected)", got, "aha")
	}
	image.Apply([]reservation.SeatEvent{{ID: "1-0", SeatID: 2, Status: reservation.SeatHeld}}, "1-0")
	if state := image.State(); string(state.Status) != "aha" || state.Tag != "1.1-0" {
		t.Errorf("after the hold's event: seats %q, tag %q; want aha and 1.1-0", state.Status, state.Tag)
	}
}

// imageExpectingAHold is a three-seat image that shows seat 2 held, a
// change this instance made whose event has not come yet.
func imageExpectingAHold(t *testing.T) *reservation.SeatImage {
	t.Helper()
	schedule, err := reservation.NewSchedule("Hamlet", time.Now().Add(time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	image := reservation.NewSeatImage(schedule)
	image.Expect([]int{2}, reservation.SeatHeld)
	return image
}
