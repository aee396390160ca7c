package reservation_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/seatlock/seatlock/internal/reservation"
)

// journalEvents records published changes in the journal, between the
// other ports' calls.
type journalEvents struct{ j *journal }

func (e journalEvents) SeatsChanged(_ context.Context, scheduleID int64, seats []reservation.Seat) error {
	for _, s := range seats {
		e.j.add("Published %d/%d %s", scheduleID, s.ID, s.Status)
	}
	return nil
}

// A change is published after PostgreSQL has it and before the seat's lock
// is given up, so the events of a seat are in the order of its changes.
func TestChangesArePublishedUnderTheSeatLock(t *testing.T) {
	t.Parallel()
	j := &journal{}
	repo := newFakeRepo(j)
	repo.addSchedule(scheduleID, seatCount)
	locker := &fakeLocker{j: j}
	svc := reservation.NewService(repo, locker,
		reservation.Config{LockTTL: lockTTL, SealBooked: true, Events: journalEvents{j}}, nil)

	r, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 3, UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.CancelReservation(context.Background(), r.ID(), "alice"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		acquired(3), "InsertReservation", fmt.Sprintf("Published %d/3 reserved", scheduleID), sealed(3, "alice"),
		"Reservation", acquired(3), "CancelReservation", fmt.Sprintf("Published %d/3 available", scheduleID), released(3),
	}
	got := j.list()
	if got[0] == "Schedule" {
		got = got[1:]
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls = %q\nwant    %q", got, want)
	}

	// A refused booking publishes nothing.
	before := len(j.list())
	if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "bob"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reserve(context.Background(), reservation.ReserveCommand{ScheduleID: scheduleID, SeatID: 4, UserID: "carol"}); err == nil {
		t.Fatal("second booking of seat 4 succeeded")
	}
	published := 0
	for _, call := range j.list()[before:] {
		if len(call) > 9 && call[:9] == "Published" {
			published++
		}
	}
	if published != 1 {
		t.Errorf("%d publications for one booking and one refusal, want 1", published)
	}
}
