package seatmap_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seatlock/seatlock/internal/reservation"
	"github.com/seatlock/seatlock/internal/seatfeed"
	"github.com/seatlock/seatlock/internal/seatmap"
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
	image.Apply([]seatfeed.Event{{ID: "2-0", SeatID: 2, Status: reservation.SeatReserved}}, "2-0")

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
	image.Apply([]seatfeed.Event{{ID: "1-0", SeatID: 2, Status: reservation.SeatHeld}}, "1-0")
	if state := image.State(); string(state.Status) != "aha" || state.Tag != "1.1-0" {
		t.Errorf("after the hold's event: seats %q, tag %q; want aha and 1.1-0", state.Status, state.Tag)
	}
}

// imageExpectingAHold is a three-seat image that shows seat 2 held, a
// change this instance made whose event has not come yet.
func imageExpectingAHold(t *testing.T) *seatmap.Image {
	t.Helper()
	schedule, err := reservation.NewSchedule("Hamlet", time.Now().Add(time.Hour), 3)
	if err != nil {
		t.Fatal(err)
	}
	image := seatmap.NewImage(schedule)
	image.Expect([]int{2}, reservation.SeatHeld)
	return image
}

// A change this instance made and undid before its event arrived (a hold
// released, a booking cancelled) shows undone, also while the first
// change's event is still to come: a seat's events come in the order of
// its changes, so the undoing's event follows, and until it does the
// image shows what this instance committed last.
func TestUndoneChangeShowsUndoneBeforeEitherEventComes(t *testing.T) {
	t.Parallel()
	image := imageExpectingAHold(t)
	image.Expect([]int{2}, reservation.SeatAvailable) // released
	if got := string(image.State().Status); got != "aaa" {
		t.Errorf("seats %q after the release, want %q", got, "aaa")
	}
	image.Apply([]seatfeed.Event{{ID: "1-0", SeatID: 2, Status: reservation.SeatHeld}}, "1-0")
	if got := string(image.State().Status); got != "aaa" {
		t.Errorf("seats %q after the hold's event, want %q: the release came after it", got, "aaa")
	}
	image.Apply([]seatfeed.Event{{ID: "2-0", SeatID: 2, Status: reservation.SeatAvailable}}, "2-0")
	if state := image.State(); string(state.Status) != "aaa" || state.Tag != "2.2-0" {
		t.Errorf("after the release's event: seats %q, tag %q; want aaa and the tag every instance has, 2.2-0", state.Status, state.Tag)
	}
}

// Changes this instance makes to a seat in quick succession (held,
// released, held again, confirmed, cancelled) show the last of them until
// its own event arrives: the events of the earlier ones come first, and
// one of them with the last change's status (the release's "available")
// is not the last change's event.
func TestOwnChangesInQuickSuccessionShowTheLastUntilItsEvent(t *testing.T) {
	t.Parallel()
	schedule, err := reservation.NewSchedule("Hamlet", time.Now().Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	image := seatmap.NewImage(schedule)
	changes := []reservation.SeatStatus{reservation.SeatHeld, reservation.SeatAvailable, reservation.SeatHeld,
		reservation.SeatReserved, reservation.SeatAvailable}
	for _, status := range changes {
		image.Expect([]int{1}, status)
	}
	for i, status := range changes {
		id := fmt.Sprintf("%d-0", i+1)
		image.Apply([]seatfeed.Event{{ID: id, SeatID: 1, Status: status}}, id)
		if got := string(image.State().Status); got != "a" {
			t.Errorf("seat %q after event %d (%s), want a: the cancellation is the last change", got, i+1, status)
		}
	}
	if state := image.State(); state.Tag != "5.5-0" {
		t.Errorf("tag %q once every event came, want the tag every instance has, 5.5-0", state.Tag)
	}
}

// After a reload that does not hold an expected change, how many of this
// instance's events are still to come is not known: a later change of
// this instance that the statuses show already is taken as shown, so the
// changes after it show as their events come.
func TestAfterAReloadAChangeTheStatusesShowIsNotExpected(t *testing.T) {
	t.Parallel()
	image := imageExpectingAHold(t)
	image.Reset(0, "", "0", nil)
	image.Expect([]int{2}, reservation.SeatAvailable) // released
	image.Apply([]seatfeed.Event{{ID: "1-0", SeatID: 2, Status: reservation.SeatReserved}}, "1-0")
	if state := image.State(); string(state.Status) != "ara" || state.Tag != "1.1-0" {
		t.Errorf("after another instance's booking: seats %q, tag %q; want ara and 1.1-0", state.Status, state.Tag)
	}
}
